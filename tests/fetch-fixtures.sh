#!/bin/bash
# Fetches the real Debian packages the tests compare against, once, into
# the fixtures directory (default: build/fixtures). Safe to re-run.
#   tests/fetch-fixtures.sh [DIR]
set -euo pipefail

dir=${1:-${FIXTURES:-build/fixtures}}
mkdir -p "$dir/debs"
dir=$(cd "$dir" && pwd)

download() {   # download PKG... into $dir/debs unless already there
    local missing=()
    for pkg in "$@"; do
        compgen -G "$dir/debs/${pkg}_*.deb" >/dev/null || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    # apt's sandbox user must be able to write where it downloads.
    (cd "$dir/debs" && chmod 0777 . && apt-get download -q "${missing[@]}" >/dev/null)
}

extract() {    # extract PKG's .deb into $dir/root/PKG
    local pkg=$1 deb
    deb=$(ls "$dir/debs/${pkg}"_*.deb | sort -V | tail -n 1)
    if [ ! -d "$dir/root/$pkg" ]; then
        mkdir -p "$dir/root/$pkg.tmp"
        dpkg-deb -x "$deb" "$dir/root/$pkg.tmp"
        mv "$dir/root/$pkg.tmp" "$dir/root/$pkg"
    fi
}

# The kernel flavour the cloud metapackage currently points at.
kernel_package() {
    apt-cache depends linux-image-cloud-amd64 2>/dev/null |
        sed -n 's/^ *Depends: \(linux-image-[0-9].*-cloud-amd64\)$/\1/p' | head -n 1
}

want=${2:-all}
if [ "$want" = all ] || [ "$want" = shim ]; then
    download shim-unsigned shim-helpers-amd64-signed shim-helpers-amd64-signed-template
    for p in shim-unsigned shim-helpers-amd64-signed shim-helpers-amd64-signed-template; do extract "$p"; done
fi
if [ "$want" = all ] || [ "$want" = kernel ]; then
    kpkg=$(kernel_package)
    [ -n "$kpkg" ] || { echo "fetch-fixtures: cannot resolve linux-image-cloud-amd64" >&2; exit 1; }
    download "$kpkg"
    extract "$kpkg"
    ln -sfn "root/$kpkg" "$dir/kernel"
fi
# Debian's signed boot chain: shim signed by Microsoft, GRUB and the
# kernel signed by Debian, as a bookworm machine boots them.
signed_kernel_package() {
    apt-cache depends linux-image-amd64 2>/dev/null |
        sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n 1
}
if [ "$want" = all ] || [ "$want" = bootchain ]; then
    kpkg=$(signed_kernel_package)
    [ -n "$kpkg" ] || { echo "fetch-fixtures: cannot resolve linux-image-amd64" >&2; exit 1; }
    download shim-signed grub-efi-amd64-signed "$kpkg"
    for p in shim-signed grub-efi-amd64-signed "$kpkg"; do extract "$p"; done
    ln -sfn "root/$kpkg" "$dir/signed-kernel"
fi
# Every bookworm signing template and the unsigned packages its files.json
# names (read from the template itself, so a new kernel ABI needs no edit).
template_unsigned() {   # the packages a template's files.json names
    local deb
    deb=$(ls "$dir/debs/${1}"_*.deb | sort -V | tail -n 1)
    dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards './usr/share/code-signing/*/files.json' |
        python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)["packages"]))'
}
if [ "$want" = all ] || [ "$want" = templates ]; then
    templates="linux-image-amd64-signed-template linux-image-6.12-amd64-signed-template
        grub-efi-amd64-signed-template shim-helpers-amd64-signed-template fwupd-amd64-signed-template"
    # shellcheck disable=SC2086
    download $templates
    for t in $templates; do
        # shellcheck disable=SC2046
        download $(template_unsigned "$t")
    done
fi
# trixie, Debian's stable release since 2025: its signing templates on
# every architecture that has them, with the unsigned packages each names,
# into $dir/trixie/debs. apt fetches them with a sources list and state of
# its own, so the release is verified with debian-archive-keyring and the
# machine's apt setup is left alone. $dir/trixie/trixie.list names them
# for the tests ("ARCH TEMPLATE" a line). The kernels' (550 MB) are fetched
# only when asked for (trixie-kernel.list), for the slow tests.
trixie_apt() {   # trixie_apt apt-get|apt-cache ARGS...
    local t=$dir/trixie/apt cmd=$1
    shift
    "$cmd" -q -o Dir::Etc::SourceList="$t/sources.list" -o Dir::Etc::SourceParts="$t/parts" \
        -o Dir::State::Lists="$t/lists" -o Dir::Cache="$t/cache" -o Dir::State::Status="$t/status" \
        -o APT::Architecture=amd64 -o APT::Architectures=amd64,arm64,i386 -o Acquire::Languages=none "$@"
}
trixie_update() {   # once a day at most; a failed update with lists at hand uses them
    local t=$dir/trixie/apt
    mkdir -p "$t/lists/partial" "$t/cache/archives/partial" "$t/parts" "$dir/trixie/debs"
    touch "$t/status"
    echo "deb [arch=amd64,arm64,i386 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
        "http://deb.debian.org/debian trixie main" >"$t/sources.list"
    # (The lists keep the archive's dates: a stamp of our own tells their age.)
    if [ -z "$(find "$t" -maxdepth 1 -name updated -mtime -1)" ]; then
        if trixie_apt apt-get update >"$t/update.log" 2>&1; then
            touch "$t/updated"
        elif [ -z "$(find "$t/lists" -maxdepth 1 -name '*_Packages')" ]; then
            cat "$t/update.log" >&2; return 1
        fi
    fi
}
trixie_missing() {   # trixie_missing ARCH PKG...: those not yet fetched, as PKG:ARCH
    local arch=$1 pkg
    shift
    for pkg in "$@"; do
        compgen -G "$dir/trixie/debs/${pkg}_*_$arch.deb" >/dev/null ||
            compgen -G "$dir/trixie/debs/${pkg}_*_all.deb" >/dev/null || echo "$pkg:$arch"
    done
}
trixie_download() {   # trixie_download PKG:ARCH...: one apt run for them all
    [ $# -eq 0 ] && return 0
    (cd "$dir/trixie/debs" && chmod 0777 . && trixie_apt apt-get download "$@" >/dev/null)
}
trixie_files_json() {   # trixie_files_json TEMPLATE: its files.json
    dpkg-deb --fsys-tarfile "$(ls "$dir/trixie/debs/${1}"_*.deb | sort -V | tail -n 1)" |
        tar -xO --wildcards './usr/share/code-signing/*/files.json'
}
if [ "$want" = all ] || [ "$want" = trixie ] || [ "$want" = trixie-kernel ]; then
    list="amd64 fwupd-amd64-signed-template
amd64 grub-efi-amd64-signed-template
amd64 shim-helpers-amd64-signed-template
amd64 systemd-boot-efi-amd64-signed-template
arm64 fwupd-arm64-signed-template
arm64 grub-efi-arm64-signed-template
arm64 shim-helpers-arm64-signed-template
arm64 systemd-boot-efi-arm64-signed-template
i386 fwupd-i386-signed-template
i386 grub-efi-ia32-signed-template"
    set=trixie
    [ "$want" = trixie-kernel ] && set=trixie-kernel && list="amd64 linux-image-amd64-signed-template
arm64 linux-image-arm64-signed-template"
    trixie_update
    # shellcheck disable=SC2046
    trixie_download $(while read -r arch t; do trixie_missing "$arch" "$t"; done <<<"$list")
    # shellcheck disable=SC2046
    trixie_download $(while read -r arch t; do
        trixie_missing "$arch" $(trixie_files_json "$t" |
            python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)["packages"]))')
    done <<<"$list")
    # What an unsigned package needs at its exact version (the GRUB images'
    # grub-common) comes too: an archive serves them together.
    # shellcheck disable=SC2046
    trixie_download $(while read -r arch t; do
        for p in $(trixie_files_json "$t" | python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)["packages"]))'); do
            # shellcheck disable=SC2046
            trixie_missing "$arch" $(dpkg-deb -f "$(ls "$dir/trixie/debs/${p}_"*"_$arch.deb" "$dir/trixie/debs/${p}_"*_all.deb 2>/dev/null |
                sort -V | tail -n 1)" Depends | tr ',' '\n' | sed -n 's/^ *\([^ ]*\) *(= .*/\1/p')
        done
    done <<<"$list")
    echo "$list" >"$dir/trixie/$set.list.tmp" && mv "$dir/trixie/$set.list.tmp" "$dir/trixie/$set.list"
fi
# A trixie build chroot for amd64, as trixie's buildds build the -signed
# packages in: mmdebstrap's buildd variant, its release verified with
# debian-archive-keyring, with the tools the templates' Build-Depends name
# beside their unsigned packages (which the tests' archive serves), so a
# build fetches little. 500 MB, made once: $dir/trixie/buildd-amd64.tar.
if [ "$want" = all ] || [ "$want" = trixie-buildd ]; then
    if [ ! -f "$dir/trixie/buildd-amd64.tar" ]; then
        mkdir -p "$dir/trixie"
        rm -f "$dir/trixie/buildd-amd64.tar.tmp"
        mmdebstrap --quiet --variant=buildd --architectures=amd64 --format=tar \
            --include=debhelper,sbsigntool,python3,kernel-wedge,kmod,rsync \
            --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
            trixie "$dir/trixie/buildd-amd64.tar.tmp" http://deb.debian.org/debian
        mv "$dir/trixie/buildd-amd64.tar.tmp" "$dir/trixie/buildd-amd64.tar"
    fi
fi
# trixie's signed boot chain, as a trixie machine boots it: shim signed by
# Microsoft, GRUB and the cloud kernel signed by Debian (36 MB); and the
# arm64 cloud kernel, an uncompressed Image with its modules (28 MB).
trixie_cloud_kernel() {   # trixie_cloud_kernel ARCH: its signed package's name (apt-cache
                          # names a foreign architecture's as NAME:ARCH)
    trixie_apt apt-cache depends "linux-image-cloud-$1:$1" 2>/dev/null |
        sed -n "s/^ *Depends: \(linux-image-[0-9].*-cloud-$1\)\(:$1\)\?\$/\1/p" | head -n 1
}
if [ "$want" = all ] || [ "$want" = trixie-bootchain ]; then
    trixie_update
    kpkg=$(trixie_cloud_kernel amd64) kpkg_arm64=$(trixie_cloud_kernel arm64)
    [ -n "$kpkg" ] && [ -n "$kpkg_arm64" ] ||
        { echo "fetch-fixtures: cannot resolve trixie's linux-image-cloud-amd64 and -arm64" >&2; exit 1; }
    # shellcheck disable=SC2046
    trixie_download $(trixie_missing amd64 shim-signed grub-efi-amd64-signed "$kpkg"; trixie_missing arm64 "$kpkg_arm64")
    for pa in shim-signed:amd64 grub-efi-amd64-signed:amd64 "$kpkg:amd64" "$kpkg_arm64:arm64"; do
        p=${pa%:*} arch=${pa#*:}
        if [ ! -d "$dir/trixie/root/$p" ]; then
            rm -rf "$dir/trixie/root/$p.tmp" && mkdir -p "$dir/trixie/root/$p.tmp"
            dpkg-deb -x "$(ls "$dir/trixie/debs/${p}"_*_"$arch".deb | sort -V | tail -n 1)" "$dir/trixie/root/$p.tmp"
            mv "$dir/trixie/root/$p.tmp" "$dir/trixie/root/$p"
        fi
    done
    ln -sfn "root/$kpkg" "$dir/trixie/signed-kernel"
    ln -sfn "root/$kpkg_arm64" "$dir/trixie/signed-kernel-arm64"
fi

#!/bin/bash
# Fetches the real Debian packages the tests compare against, once, into
# the fixtures directory (default: build/fixtures). Safe to re-run.
#   tests/fetch-fixtures.sh [DIR]
set -euo pipefail

dir=${1:-${FIXTURES:-build/fixtures}}
mkdir -p "$dir/debs"
dir=$(cd "$dir" && pwd)
tools=$(cd "$(dirname "$0")/tools" && pwd)

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
    deb=$(bash "$tools/newest-deb.sh" "$dir/debs" "$pkg")
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

# The machine's own Debian mirror, from its apt configuration (the project
# names no host): the base URI of the source that serves the release
# (`apt_mirror`) or its security updates (`apt_mirror security`).
apt_mirror() {   # apt_mirror [security]
    local uri
    uri=$(apt-get indextargets --format '$(RELEASE) $(REPO_URI)' 2>/dev/null | awk -v sec="${1:-}" '
        (sec == "security") == ($1 ~ /-security$/) && $1 !~ /-(updates|backports)$/ { print $2; exit }')
    [ -n "$uri" ] || { echo "fetch-fixtures: the machine's apt sources name no Debian ${1:-release} mirror" >&2; return 1; }
    echo "${uri%/}"
}
# A build chroot for amd64 as RELEASE's buildds build the -signed packages
# in: mmdebstrap's buildd variant, its release verified with
# debian-archive-keyring, with the tools the templates' Build-Depends name
# beside their unsigned packages (which the tests' archive serves), so a
# build fetches little. 500 MB, made once: $dir/RELEASE/buildd-amd64.tar.
# trixie's (trixie-buildd) builds in the default run, forky's
# (forky-buildd) in the slow tests.
make_buildd() {   # make_buildd RELEASE
    local tar=$dir/$1/buildd-amd64.tar
    [ -f "$tar" ] && return 0
    mkdir -p "$dir/$1"
    rm -f "$tar.tmp"
    # The machine's apt policy on expired Release files (a frozen mirror's
    # testing release) holds in the chroot too: mmdebstrap reads none of it.
    local opts=() check=
    eval "$(apt-config shell check Acquire::Check-Valid-Until)"
    [ "$check" = false ] && opts=(--aptopt='Acquire::Check-Valid-Until "false"')
    mmdebstrap --quiet --variant=buildd --architectures=amd64 --format=tar "${opts[@]}" \
        --include=debhelper,sbsigntool,python3,kernel-wedge,kmod,rsync \
        --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
        "$1" "$tar.tmp" "$(apt_mirror)"
    mv "$tar.tmp" "$tar"
}
# A chroot to cross-build reprosign for a bookworm architecture of another
# word size or byte order than amd64's (i386: 32-bit; s390x: big-endian),
# as Debian's buildds build it there: bookworm's cross compiler, that
# architecture's libraries reprosign links, and qemu-user-static to run
# what it builds (of its 70 emulators, dpkg unpacks only ARCH's: the others
# are 420 MB). Made once: $dir/cross/ARCH.tar.
make_cross() {   # make_cross ARCH QEMU-NAME
    local tar=$dir/cross/$1.tar triplet libs
    [ -f "$tar" ] && return 0
    triplet=$(dpkg-architecture -a"$1" -qDEB_HOST_GNU_TYPE 2>/dev/null)
    libs=$(printf '%s:'"$1"',' libc6-dev libssl-dev libp11-kit-dev libjansson-dev libarchive-dev \
        libsqlite3-dev libsystemd-dev libgpgme-dev)
    mkdir -p "$dir/cross"
    rm -f "$tar.tmp"
    mmdebstrap --quiet --variant=apt --architectures=amd64,"$1" --format=tar \
        --dpkgopt='path-exclude=/usr/bin/qemu-*' --dpkgopt="path-include=/usr/bin/$2-static" \
        --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' \
        --include="gcc-$triplet,cmake,make,pkg-config,qemu-user-static,${libs%,}" \
        --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
        bookworm "$tar.tmp" "$(apt_mirror)"
    mv "$tar.tmp" "$tar"
}
want=${2:-all}
# The default set (`all`) is what the default run's tests need. The build
# chroots (trixie-buildd, forky-buildd, cross-i386, cross-s390x), the slow
# tests' boot chains (bookworm-i386, trixie-bootchain, forky-bootchain) and
# forky's templates are made or fetched when asked for: each slow test asks
# with need_fixtures.
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
unsigned_in() {   # unsigned_in DEBS TEMPLATE: the packages the newest TEMPLATE .deb's files.json names
    bash "$tools/template-packages.sh" "$(bash "$tools/newest-deb.sh" "$1" "$2")"
}
if [ "$want" = all ] || [ "$want" = templates ]; then
    templates="linux-image-amd64-signed-template linux-image-6.12-amd64-signed-template
        grub-efi-amd64-signed-template shim-helpers-amd64-signed-template fwupd-amd64-signed-template"
    # shellcheck disable=SC2086
    download $templates
    for t in $templates; do
        # shellcheck disable=SC2046
        download $(unsigned_in "$dir/debs" "$t")
    done
fi
# Releases and architectures beyond the machine's own: apt with a sources
# list and state of its own for each set ($dir/SET/apt), so every release is
# verified with debian-archive-keyring and the machine's apt setup is left
# alone. Packages land in $dir/SET/debs.
set_apt() {   # set_apt SET apt-get|apt-cache ARGS...
    local t=$dir/$1/apt cmd=$2
    shift 2
    "$cmd" -q -o Dir::Etc::SourceList="$t/sources.list" -o Dir::Etc::SourceParts="$t/parts" \
        -o Dir::State::Lists="$t/lists" -o Dir::Cache="$t/cache" -o Dir::State::Status="$t/status" \
        -o APT::Architecture=amd64 -o APT::Architectures=amd64,arm64,i386 -o Acquire::Languages=none "$@"
}
set_update() {   # set_update SET SOURCES: once a day at most; a failed update with lists at hand uses them
    local t=$dir/$1/apt
    mkdir -p "$t/lists/partial" "$t/cache/archives/partial" "$t/parts" "$dir/$1/debs"
    touch "$t/status"
    # A sources list that changed (a set that takes more) is updated at once.
    # It is replaced whole, never rewritten in place: tests running side by
    # side fetch sets of one release, and apt in one must never read a list
    # another is writing.
    if [ "$(cat "$t/sources.list" 2>/dev/null)" != "$2" ]; then
        rm -f "$t/updated"
        echo "$2" >"$t/sources.list.$$" && mv "$t/sources.list.$$" "$t/sources.list"
    fi
    # (The lists keep the archive's dates: a stamp of our own tells their age.)
    if [ -z "$(find "$t" -maxdepth 1 -name updated -mtime -1)" ]; then
        if set_apt "$1" apt-get update >"$t/update.log" 2>&1; then
            touch "$t/updated"
        elif [ -z "$(find "$t/lists" -maxdepth 1 -name '*_Packages*')" ]; then
            cat "$t/update.log" >&2; return 1
        fi
    fi
}
set_missing() {   # set_missing SET ARCH PKG...: those not yet fetched, as PKG:ARCH
    local set=$1 arch=$2 pkg
    shift 2
    for pkg in "$@"; do
        compgen -G "$dir/$set/debs/${pkg}_*_$arch.deb" >/dev/null ||
            compgen -G "$dir/$set/debs/${pkg}_*_all.deb" >/dev/null || echo "$pkg:$arch"
    done
}
set_download() {   # set_download SET PKG:ARCH...: one apt run for them all
    local set=$1
    shift
    [ $# -eq 0 ] && return 0
    (cd "$dir/$set/debs" && chmod 0777 . && set_apt "$set" apt-get download "$@" >/dev/null)
}
set_extract() {   # set_extract SET PKG:ARCH[=NAME]...: each into $dir/SET/root/NAME (default PKG)
    local set=$1 spec pa p arch name
    shift
    for spec in "$@"; do
        pa=${spec%%=*} name=${spec#*=}
        p=${pa%:*} arch=${pa#*:}
        [ "$name" = "$spec" ] && name=$p
        if [ ! -d "$dir/$set/root/$name" ]; then
            rm -rf "$dir/$set/root/$name.tmp" && mkdir -p "$dir/$set/root/$name.tmp"
            dpkg-deb -x "$(bash "$tools/newest-deb.sh" "$dir/$set/debs" "$p" "$arch")" "$dir/$set/root/$name.tmp"
            mv "$dir/$set/root/$name.tmp" "$dir/$set/root/$name"
        fi
    done
}
# The signed kernel a metapackage depends on (apt-cache names a foreign
# architecture's as NAME:ARCH).
set_kernel() {   # set_kernel SET METAPACKAGE ARCH
    set_apt "$1" apt-cache depends "$2:$3" 2>/dev/null |
        sed -n "s/^ *Depends: \(linux-image-[0-9][^:]*\)\(:$3\)\?\$/\1/p" | head -n 1
}
debian_sources() {   # debian_sources ARCHS SUITE...: sources.list lines, main only
    local suite mirror
    for suite in "${@:2}"; do
        mirror=$(apt_mirror) || return 1
        [[ $suite == *-security ]] && { mirror=$(apt_mirror security) || return 1; }
        echo "deb [arch=$1 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main"
    done
}
# A release's signing templates with the unsigned packages each names, and
# what those need at their exact versions (the GRUB images' grub-common: an
# archive serves them together), into $dir/SET/debs; $dir/SET/LIST.list
# names the templates for the tests ("ARCH TEMPLATE" a line).
set_templates() {   # set_templates SET LIST TEMPLATES (after set_update SET)
    local set=$1 name=$2 list=$3 arch t p
    # shellcheck disable=SC2046
    set_download "$set" $(while read -r arch t; do set_missing "$set" "$arch" "$t"; done <<<"$list")
    # shellcheck disable=SC2046
    set_download "$set" $(while read -r arch t; do set_missing "$set" "$arch" $(unsigned_in "$dir/$set/debs" "$t"); done <<<"$list")
    # shellcheck disable=SC2046
    set_download "$set" $(while read -r arch t; do
        for p in $(unsigned_in "$dir/$set/debs" "$t"); do
            # shellcheck disable=SC2046
            set_missing "$set" "$arch" $(dpkg-deb -f "$(bash "$tools/newest-deb.sh" "$dir/$set/debs" "$p" "$arch" all)" Depends |
                tr ',' '\n' | sed -n 's/^ *\([^ ]*\) *(= .*/\1/p')
        done
    done <<<"$list")
    echo "$list" >"$dir/$set/$name.list.tmp" && mv "$dir/$set/$name.list.tmp" "$dir/$set/$name.list"
}
# trixie, Debian's stable release since 2025: its signing templates on
# every architecture that has them ($dir/trixie/trixie.list). The kernels'
# (550 MB) are fetched only when asked for (trixie-kernel.list), for the
# slow tests.
trixie_update() { set_update trixie "$(debian_sources amd64,arm64,i386 trixie)"; }
# The templates of every boot loader and firmware updater Debian signs,
# since trixie: amd64 and arm64 have all four, i386 two.
loader_templates() {
    local arch
    for arch in amd64 arm64; do
        printf '%s %s\n' "$arch" fwupd-$arch-signed-template "$arch" grub-efi-$arch-signed-template \
            "$arch" shim-helpers-$arch-signed-template "$arch" systemd-boot-efi-$arch-signed-template
    done
    printf 'i386 fwupd-i386-signed-template\ni386 grub-efi-ia32-signed-template'
}
if [ "$want" = all ] || [ "$want" = trixie ]; then
    trixie_update
    set_templates trixie trixie "$(loader_templates)"
fi
if [ "$want" = trixie-kernel ]; then
    trixie_update
    set_templates trixie trixie-kernel "amd64 linux-image-amd64-signed-template
arm64 linux-image-arm64-signed-template"
fi
# forky, Debian's testing release: one apt for its templates and its
# kernels. Since forky the kernel's template is linux-signed-ARCH-template,
# and the images it lists come in packages of their own
# (linux-binary-unsigned-*, 10 to 15 MB each): every template on every
# architecture that has them, with its unsigned packages, is about 130 MB
# ($dir/forky/templates.list).
forky_update() { set_update forky "$(debian_sources amd64,arm64,i386,loong64,riscv64 forky)"; }
if [ "$want" = forky-templates ]; then
    forky_update
    set_templates forky templates "amd64 linux-signed-amd64-template
arm64 linux-signed-arm64-template
$(loader_templates)"
fi
if [ "$want" = trixie-buildd ]; then make_buildd trixie; fi
if [ "$want" = forky-buildd ]; then make_buildd forky; fi
if [ "$want" = cross-i386 ]; then make_cross i386 qemu-i386; fi
if [ "$want" = cross-s390x ]; then make_cross s390x qemu-s390x; fi
# trixie's signed boot chain, as a trixie machine boots it: shim signed by
# Microsoft, GRUB and the cloud kernel signed by Debian (36 MB); and the
# same for arm64, its cloud kernel an uncompressed Image, with an arm64
# busybox for the initramfs (31 MB). arm64's shim is root/shim-signed-arm64.
if [ "$want" = trixie-bootchain ]; then
    trixie_update
    kpkg=$(set_kernel trixie linux-image-cloud-amd64 amd64) kpkg_arm64=$(set_kernel trixie linux-image-cloud-arm64 arm64)
    [ -n "$kpkg" ] && [ -n "$kpkg_arm64" ] ||
        { echo "fetch-fixtures: cannot resolve trixie's linux-image-cloud-amd64 and -arm64" >&2; exit 1; }
    # shellcheck disable=SC2046
    set_download trixie $(set_missing trixie amd64 shim-signed grub-efi-amd64-signed "$kpkg"
        set_missing trixie arm64 shim-signed grub-efi-arm64-signed busybox-static "$kpkg_arm64")
    set_extract trixie shim-signed:amd64 grub-efi-amd64-signed:amd64 "$kpkg:amd64" "$kpkg_arm64:arm64" \
        shim-signed:arm64=shim-signed-arm64 grub-efi-arm64-signed:arm64 busybox-static:arm64=busybox-static-arm64
    ln -sfn "root/$kpkg" "$dir/trixie/signed-kernel"
    ln -sfn "root/$kpkg_arm64" "$dir/trixie/signed-kernel-arm64"
fi
# bookworm's signed boot chain for 32-bit x86, as a machine with 32-bit UEFI
# boots it: shim signed by Microsoft (shimia32), GRUB for i386-efi and the
# 686 kernel signed by Debian, with an i386 busybox for the initramfs
# (55 MB), into $dir/bookworm-i386.
if [ "$want" = bookworm-i386 ]; then
    set_update bookworm-i386 "$(debian_sources i386 bookworm bookworm-updates bookworm-security)"
    kpkg=$(set_kernel bookworm-i386 linux-image-686 i386)
    [ -n "$kpkg" ] || { echo "fetch-fixtures: cannot resolve bookworm's linux-image-686" >&2; exit 1; }
    # shellcheck disable=SC2046
    set_download bookworm-i386 $(set_missing bookworm-i386 i386 shim-signed grub-efi-ia32-signed "$kpkg" busybox-static)
    set_extract bookworm-i386 shim-signed:i386 grub-efi-ia32-signed:i386 "$kpkg:i386" busybox-static:i386
    ln -sfn "root/$kpkg" "$dir/bookworm-i386/signed-kernel"
fi
# A forky kernel comes in three packages: the image (linux-binary-*, which
# installs /usr/lib/modules/VERSION/vmlinuz), its modules (linux-modules-*)
# and linux-image-* depending on both.
forky_kernel() {   # forky_kernel METAPACKAGE ARCH LINKS: the image's and modules' PKG:ARCH;
    # LINKS/binary and LINKS/modules point where set_extract puts them
    local kpkg parts p
    kpkg=$(set_kernel forky "$1" "$2")
    [ -n "$kpkg" ] && parts=$(set_apt forky apt-cache depends "$kpkg:$2" 2>/dev/null |
        sed -n 's/^ *Depends: \(linux-\(binary\|modules\)-[^:]*\).*/\1/p' | sort -u)
    [ "$(echo "${parts:-}" | wc -w)" = 2 ] ||
        { echo "fetch-fixtures: cannot resolve forky's $1 ($2) into its image and modules" >&2; return 1; }
    mkdir -p "$3"
    ln -sfn "../root/$(grep '^linux-binary-' <<<"$parts")" "$3/binary"
    ln -sfn "../root/$(grep '^linux-modules-' <<<"$parts")" "$3/modules"
    for p in $parts; do echo "$p:$2"; done
}
# forky's signed boot chain, as a forky machine boots it: shim signed by
# Microsoft, GRUB 2.14 and the cloud kernel signed by Debian, its image and
# modules (55 MB), into $dir/forky/root, with links
# $dir/forky/signed-kernel/{binary,modules}; and the same for arm64, with
# an arm64 busybox for the initramfs (39 MB more), arm64's shim and busybox as
# root/shim-signed-arm64 and root/busybox-static-arm64, its kernel linked
# as $dir/forky/signed-kernel-arm64/{binary,modules}.
if [ "$want" = forky-bootchain ]; then
    forky_update
    k=$(forky_kernel linux-image-cloud-amd64 amd64 "$dir/forky/signed-kernel") || exit 1
    k64=$(forky_kernel linux-image-cloud-arm64 arm64 "$dir/forky/signed-kernel-arm64") || exit 1
    # shellcheck disable=SC2046,SC2086
    set_download forky $(set_missing forky amd64 shim-signed grub-efi-amd64-signed ${k//:amd64/}
        set_missing forky arm64 shim-signed grub-efi-arm64-signed busybox-static ${k64//:arm64/})
    # shellcheck disable=SC2086
    set_extract forky shim-signed:amd64 grub-efi-amd64-signed:amd64 $k $k64 \
        shim-signed:arm64=shim-signed-arm64 grub-efi-arm64-signed:arm64 busybox-static:arm64=busybox-static-arm64
fi
# forky's kernels for loong64 and riscv64, the Debian kernels whose images
# are neither a bzImage nor an arm64 Image: loong64's is an EFI zboot image
# (its kernel compressed with zstd inside a small EFI program), riscv64's
# a RISC-V Image; each with its modules (210 MB), into $dir/forky/root,
# with links $dir/forky/kernel-ARCH/{binary,modules}.
if [ "$want" = all ] || [ "$want" = forky-kernels ]; then
    forky_update
    specs=()
    for arch in loong64 riscv64; do
        k=$(forky_kernel "linux-image-$arch" "$arch" "$dir/forky/kernel-$arch") || exit 1
        # shellcheck disable=SC2206
        specs+=($k)
    done
    # shellcheck disable=SC2046
    set_download forky $(for spec in "${specs[@]}"; do set_missing forky "${spec#*:}" "${spec%:*}"; done)
    set_extract forky "${specs[@]}"
fi

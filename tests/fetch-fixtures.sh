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

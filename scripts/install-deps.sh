#!/bin/sh
# Installs everything reprosign needs to build and to run its tests against
# the real peer tools. Debian 12 (bookworm), as root.
#   sh scripts/install-deps.sh           install them
#   sh scripts/install-deps.sh --list    print the package names only
# tests/tools/check-deps.py checks that every tool a test calls comes from
# one of these packages (or one they depend on).
set -eu
packages="
    build-essential cmake pkg-config clang clang-tools libclang-rt-14-dev
    libssl-dev libp11-kit-dev libjansson-dev libarchive-dev libarchive13 libsqlite3-dev libsystemd-dev libgpgme-dev
    openssl ca-certificates python3 python3-jsonschema binutils xz-utils zstd bc time jq git
    sbsigntool osslsigncode pesign linux-kbuild-6.1 kmod bsdutils
    softhsm2 opensc p11-kit
    dpkg-dev debhelper lintian valgrind groff-base man-db zsh apt-utils gpg gpgv systemd util-linux prometheus
    qemu-system-x86 qemu-system-arm ovmf ovmf-ia32 qemu-efi-aarch64 gnu-efi mtools dosfstools efitools busybox-static
    golang-go golang-golang-x-mod-dev reprepro apt debian-archive-keyring mmdebstrap
    reprotest faketime disorderfs diffoscope-minimal sudo
    in-toto python3-cryptography gpg-agent
"
if [ "${1:-}" = --list ]; then
    echo $packages
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $packages

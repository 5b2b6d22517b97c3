#!/bin/bash
# ctest-label: slow
# The archive round trip of test_archive_roundtrip.sh for trixie, Debian's
# stable release, as its archive and buildds do it: reprepro serves
# trixie's real templates (shim-helpers, GRUB, systemd-boot, fwupd) with
# their unsigned packages and takes the service's signed uploads; each
# -signed source from the pool is built with the template's own rules in
# a trixie build chroot (mmdebstrap's buildd variant), its build
# dependencies installed there by apt from the test archive; and every
# signed file of the built packages, downloaded from the archive, verifies.
. "$TESTS_DIR/lib.sh"
need_fixtures trixie
need_fixtures trixie-buildd
ROUNDTRIP_SUITE=trixie ROUNDTRIP_DEBS=$FIXTURES/trixie/debs ROUNDTRIP_BUILDD=$FIXTURES/trixie/buildd-amd64.tar
. "$TESTS_DIR/interop/archive_lib.sh"

for t in shim-helpers-amd64-signed-template grub-efi-amd64-signed-template \
    systemd-boot-efi-amd64-signed-template fwupd-amd64-signed-template; do
    rm -rf "$WORK/state" "$WORK/out" "$WORK/upload-copy" "$WORK/log"
    roundtrip "$t"
done
finish

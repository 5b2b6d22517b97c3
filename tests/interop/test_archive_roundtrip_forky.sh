#!/bin/bash
# ctest-label: slow
# The archive round trip of test_archive_roundtrip_trixie.sh for forky,
# Debian's testing release, on every amd64 template it has (the list of
# fetch-fixtures.sh forky-templates): reprepro serves
# each with its unsigned packages, the service's signed upload is accepted,
# the -signed source is built in a forky build chroot with the template's
# own debian/rules, and every signed file of the built packages verifies.
# The kernel's, linux-signed-amd64-template, lists three linux-binary-
# unsigned-* packages; its rules attach each signature to vmlinuz.unsigned
# and install the result as vmlinuz beside it.
# Heavy (a forky chroot of 600 MB): run by scripts/slow-tests.sh, not in CI.
. "$TESTS_DIR/lib.sh"
need_fixtures forky-templates
need_fixtures forky-buildd
ROUNDTRIP_SUITE=forky ROUNDTRIP_DEBS=$FIXTURES/forky/debs ROUNDTRIP_BUILDD=$FIXTURES/forky/buildd-amd64.tar
. "$TESTS_DIR/interop/archive_lib.sh"

for t in $(sed -n 's/^amd64 //p' "$FIXTURES/forky/templates.list"); do
    rm -rf "$WORK/state" "$WORK/out" "$WORK/upload-copy" "$WORK/log"
    roundtrip "$t"
done
finish

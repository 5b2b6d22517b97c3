#!/bin/bash
# ctest-label: slow
# The archive round trip of test_archive_roundtrip_trixie.sh for trixie's
# real linux-image-amd64-signed-template: its three unsigned kernel
# packages served by reprepro, the service's signed upload accepted, the
# -signed source built in a trixie build chroot with the kernel team's own
# debian/rules, and every signed image of the built packages verified.
# Heavy: run by scripts/slow-tests.sh, not in CI.
. "$TESTS_DIR/lib.sh"
need_fixtures trixie-kernel
need_fixtures trixie-buildd
ROUNDTRIP_SUITE=trixie ROUNDTRIP_DEBS=$FIXTURES/trixie/debs ROUNDTRIP_BUILDD=$FIXTURES/trixie/buildd-amd64.tar
. "$TESTS_DIR/interop/archive_lib.sh"

roundtrip linux-image-amd64-signed-template
finish

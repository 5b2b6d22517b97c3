#!/bin/bash
# ctest-label: slow
# The archive round trip of test_archive_roundtrip_trixie_kernel.sh for
# forky's kernel template, linux-signed-amd64-template: reprepro serves it
# with its three linux-binary-unsigned-* packages, the service's signed
# upload is accepted, the -signed source is built in a forky build chroot
# with the kernel team's own debian/rules (which attaches each signature to
# vmlinuz.unsigned and installs the result as vmlinuz beside it), and each
# flavour's signed vmlinuz in the built packages verifies.
# Heavy (a forky chroot of 500 MB): run by scripts/slow-tests.sh, not in CI.
. "$TESTS_DIR/lib.sh"
need_fixtures forky-templates
need_fixtures forky-buildd
ROUNDTRIP_SUITE=forky ROUNDTRIP_DEBS=$FIXTURES/forky/debs ROUNDTRIP_BUILDD=$FIXTURES/forky/buildd-amd64.tar
. "$TESTS_DIR/interop/archive_lib.sh"

roundtrip linux-signed-amd64-template
finish

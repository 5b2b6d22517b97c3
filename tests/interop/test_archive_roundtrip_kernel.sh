#!/bin/bash
# ctest-label: slow
# The archive round trip of test_archive_roundtrip.sh for bookworm's real
# linux-image-amd64-signed-template: three unsigned kernel packages of
# 25-70 MB served by reprepro, the service's signed upload accepted, the
# -signed source built with the kernel team's own debian/rules (its
# build dependencies, the unsigned kernels among them, installed by apt),
# and every signed image of the built packages verified. Heavy: run by
# scripts/slow-tests.sh, not in CI.
. "$TESTS_DIR/lib.sh"
need_fixtures templates
. "$TESTS_DIR/interop/archive_lib.sh"

roundtrip linux-image-amd64-signed-template
finish

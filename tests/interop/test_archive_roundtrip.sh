#!/bin/bash
# The whole archive round trip with reprepro on both ends, for Debian's
# real shim-helpers-amd64-signed-template and grub-efi-amd64-signed-template:
# the service signs each request and uploads a signed source-only upload,
# reprepro accepts it (and rejects another key's and a tampered one), the
# -signed package builds from the pool, and every signed file verifies.
. "$TESTS_DIR/lib.sh"
need_fixtures templates
. "$TESTS_DIR/interop/archive_lib.sh"

for t in shim-helpers-amd64-signed-template grub-efi-amd64-signed-template; do
    rm -rf "$WORK/state" "$WORK/out" "$WORK/upload-copy" "$WORK/log"
    roundtrip "$t"
done
finish

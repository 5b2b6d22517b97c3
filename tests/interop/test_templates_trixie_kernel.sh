#!/bin/bash
# ctest-label: slow
# trixie's kernel signing templates, amd64 and arm64 (3 and 4 flavours, the
# arm64 16k pages one among them; 550 MB of unsigned packages), as
# test_templates_trixie.sh takes the others: sign-template, dpkg-source -x,
# every image attached and verified, then both through the service.
. "$TESTS_DIR/lib.sh"
need_fixtures trixie-kernel
need_tool dpkg-source; need_tool sbverify; need_tool python3
. "$TESTS_DIR/interop/templates_lib.sh"

trixie_templates trixie-kernel
finish

#!/bin/bash
# trixie's signing templates on every architecture that has them (amd64,
# arm64, and i386's ia32 GRUB and fwupd), systemd-boot's among them (new
# since bookworm), at their real sizes with their real unsigned packages
# read as .debs: each through sign-template, its .dsc unpacked with
# dpkg-source -x, every signature attached with attach-tree and verified
# with sbverify and reprosign verify; then all of them through the service,
# from one archive of three architectures. The kernels' templates are
# test_templates_trixie_kernel.sh's (slow).
. "$TESTS_DIR/lib.sh"
need_fixtures trixie
need_tool dpkg-source; need_tool sbverify; need_tool python3; need_tool reprepro
. "$TESTS_DIR/interop/templates_lib.sh"

release_templates trixie trixie
finish

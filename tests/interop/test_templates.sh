#!/bin/bash
# Every bookworm signing template at its real size, with its real unsigned
# packages read as .debs: through sign-template and through the service,
# each giving a .dsc that dpkg-source -x unpacks, and every signature
# attached with attach-tree and verified. linux-image-6.12's relative
# symlinks in source-template/ reach the source package.
. "$TESTS_DIR/lib.sh"
need_fixtures templates
need_tool dpkg-source; need_tool sbverify; need_tool python3; need_tool reprepro
. "$TESTS_DIR/interop/templates_lib.sh"

list="amd64 fwupd-amd64-signed-template
amd64 grub-efi-amd64-signed-template
amd64 shim-helpers-amd64-signed-template
amd64 linux-image-amd64-signed-template
amd64 linux-image-6.12-amd64-signed-template"
make_key db
export SOURCE_DATE_EPOCH=1700000000

while read -r arch t; do template_checks "$FIXTURES/debs" "$arch" "$t"; done <<<"$list"

k=linux-image-6.12-amd64-signed-template
check "$k: the 8 relative symlinks of debian/installer/modules/ are carried as symlinks" bash -c "
    cd '$WORK/amd64-$k/out/unpacked/debian/installer/modules' && [ \$(find . -maxdepth 1 -type l | wc -l) = 8 ] &&
    [ \"\$(readlink mips64)\" = mips ] && [ -d mips64/ ]"

. "$TESTS_DIR/interop/service_lib.sh"
templates_through_service "$FIXTURES/debs" bookworm "$list"
finish

#!/bin/bash
# The differential test of test_boot_chain.sh on forky's chain, as Debian's
# testing release boots now: OVMF's Secure Boot build with Microsoft's keys
# boots forky's shim-signed (shim 16.1), grub-efi-amd64-signed (GRUB 2.14)
# and the signed cloud kernel (Linux 7.2, its image now in a package of its
# own, linux-binary-*, at /usr/lib/modules/VERSION/vmlinuz, its modules in
# linux-modules-*) into a busybox initramfs. The cases are
# test_boot_chain_trixie.sh's (release_chain_lib.sh): for each, the boot's
# verdict and reprosign chain's must agree, for modules the locked-down
# kernel's and chain's, for the built-in keys their names.
. "$TESTS_DIR/lib.sh"
need_tool qemu-system-x86_64; need_tool mkfs.vfat; need_tool mcopy; need_tool python3; need_tool busybox; need_tool xz
[ -r /usr/share/OVMF/OVMF_VARS_4M.ms.fd ] || skip "ovmf is not installed"
need_fixtures forky-bootchain
. "$TESTS_DIR/tools/boot-chain.sh"
. "$TESTS_DIR/interop/release_chain_lib.sh"
F=$FIXTURES/forky
KERNEL=$(ls "$F"/signed-kernel/binary/usr/lib/modules/*/vmlinuz | head -n 1)
MODS=$F/signed-kernel/modules/usr/lib/modules
L=$(ls -d "$MODS"/*/kernel/lib)
release_chain forky "$F/root/shim-signed/usr/lib/shim/shimx64.efi.signed" \
    "$F/root/grub-efi-amd64-signed/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed" "$KERNEL" "$MODS" \
    "$L/ts_fsm.ko.xz" "$L/ts_kmp.ko.xz" "$L/ts_bm.ko.xz" "$L/crc/crc-itu-t.ko.xz"
finish

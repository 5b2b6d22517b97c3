#!/bin/bash
# The differential test: reprosign chain against a real boot. OVMF's
# Secure Boot build with Microsoft's keys boots Debian's shim-signed,
# grub-efi-amd64-signed and the signed kernel of linux-image-amd64 into a
# busybox initramfs (tests/tools/mkinitramfs.py) that reports over serial.
# For each case the boot's verdict and chain's must agree (the cases are
# release_chain_lib.sh's, shared with the later releases and the other
# architectures). The slower cases are in test_boot_chain_slow.sh.
. "$TESTS_DIR/lib.sh"
need_tool qemu-system-x86_64; need_tool mkfs.vfat; need_tool mcopy; need_tool python3; need_tool busybox; need_tool jq
[ -r /usr/share/OVMF/OVMF_VARS_4M.ms.fd ] || skip "ovmf is not installed"
need_fixtures bootchain
. "$TESTS_DIR/tools/boot-chain.sh"
. "$TESTS_DIR/interop/release_chain_lib.sh"
MODS=$(ls -d "$FIXTURES"/signed-kernel/lib/modules/*/kernel)
release_chain bookworm x64 /usr/share/OVMF/OVMF_VARS_4M.ms.fd \
    "$FIXTURES/root/shim-signed/usr/lib/shim/shimx64.efi.signed" \
    "$FIXTURES/root/grub-efi-amd64-signed/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed" \
    "$(ls "$FIXTURES"/signed-kernel/boot/vmlinuz-* | head -n 1)" "$FIXTURES/signed-kernel/lib/modules" \
    "$(command -v busybox)" "$MODS/lib/crc7.ko" "$MODS/lib/crc8.ko" "$MODS/lib/ts_kmp.ko" "$MODS/fs/efivarfs/efivarfs.ko"
finish

#!/bin/bash
# ctest-label: slow
# The differential test of test_boot_chain.sh on trixie's chain: OVMF's
# Secure Boot build with Microsoft's keys boots trixie's shim-signed (shim
# 16.1), grub-efi-amd64-signed (GRUB 2.12, which loads the kernel with its
# own PE loader and verifies it through shim_lock) and the signed cloud
# kernel (Linux 6.12) into a busybox initramfs. The cases are
# release_chain_lib.sh's: for each the boot's verdict and reprosign chain's
# must agree; for the modules, compressed with xz as trixie ships them, the
# kernel's under lockdown and chain's; for the keys built into the kernel,
# the names its log gives them and chain's. trixie's arm64 kernel gives its
# build key the same way.
. "$TESTS_DIR/lib.sh"
need_tool qemu-system-x86_64; need_tool mkfs.vfat; need_tool mcopy; need_tool python3; need_tool busybox; need_tool xz; need_tool jq
[ -r /usr/share/OVMF/OVMF_VARS_4M.ms.fd ] || skip "ovmf is not installed"
need_fixtures trixie-bootchain
. "$TESTS_DIR/tools/boot-chain.sh"
. "$TESTS_DIR/interop/release_chain_lib.sh"
T=$FIXTURES/trixie
MODS=$T/signed-kernel/usr/lib/modules
K=$(ls -d "$MODS"/*/kernel)
release_chain trixie x64 /usr/share/OVMF/OVMF_VARS_4M.ms.fd "$T/root/shim-signed/usr/lib/shim/shimx64.efi.signed" \
    "$T/root/grub-efi-amd64-signed/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed" \
    "$(ls "$T"/signed-kernel/boot/vmlinuz-* | head -n 1)" "$MODS" "$(command -v busybox)" \
    "$K/lib/crc7.ko.xz" "$K/lib/ts_kmp.ko.xz" "$K/lib/ts_bm.ko.xz" "$K/fs/efivarfs/efivarfs.ko.xz"
# trixie's arm64 kernel is an Image, not compressed, where `.align 8`
# means 256 bytes: every one of its modules verifies by the build key
# chain reads out of it (its chain boots in test_boot_chain_arches.sh).
A64=$(ls "$T"/signed-kernel-arm64/boot/vmlinuz-* | head -n 1)
n64=$(find "$T"/signed-kernel-arm64/usr/lib/modules -name '*.ko.xz' | wc -l)
"$REPROSIGN" chain --vars /usr/share/OVMF/OVMF_VARS_4M.ms.fd "$A64" --modules "$T/signed-kernel-arm64/usr/lib/modules" \
    --json >"$WORK/a64.json" 2>"$WORK/a64.err" || true
check "chain verifies all $n64 modules of trixie's arm64 kernel by the build key in its Image" \
    jq -e --argjson n "$n64" '.modules.builtin_keys.from == "image" and .modules.verified == $n and
        .modules.failed == 0 and $n > 1000' "$WORK/a64.json"
finish

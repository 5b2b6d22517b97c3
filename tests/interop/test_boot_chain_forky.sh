#!/bin/bash
# ctest-label: slow
# The differential test of test_boot_chain.sh on forky's chains, as
# Debian's testing release boots now, for amd64 and arm64: the firmware
# with Microsoft's keys (OVMF's Secure Boot build; AAVMF in
# qemu-system-aarch64 -machine virt) boots forky's shim-signed (shim 16.1),
# GRUB 2.14 and the signed cloud kernel (Linux 7.2, its image now in a
# package of its own, linux-binary-*, at /usr/lib/modules/VERSION/vmlinuz,
# its modules in linux-modules-*) into a busybox initramfs. The cases are
# release_chain_lib.sh's: for each, the boot's verdict and reprosign
# chain's must agree, for modules the locked-down kernel's and chain's, for
# the built-in keys their names, for the variables the kernel shows chain
# --efivars and chain --vars.
. "$TESTS_DIR/lib.sh"
need_tool qemu-system-x86_64; need_tool qemu-system-aarch64; need_tool mkfs.vfat; need_tool mcopy; need_tool python3
need_tool busybox; need_tool xz; need_tool jq
[ -r /usr/share/OVMF/OVMF_VARS_4M.ms.fd ] || skip "ovmf is not installed"
[ -r /usr/share/AAVMF/AAVMF_CODE.fd ] && [ -r /usr/share/AAVMF/AAVMF_VARS.ms.fd ] || skip "qemu-efi-aarch64 is not installed"
need_fixtures forky-bootchain
. "$TESTS_DIR/tools/boot-chain.sh"
. "$TESTS_DIR/interop/release_chain_lib.sh"
F=$FIXTURES/forky
# forky_chain LABEL ARCH VARS SHIM GRUB KERNEL-LINKS BUSYBOX: KERNEL-LINKS
# is fetch-fixtures.sh's pair of links, binary and modules.
forky_chain() {
    local mods k
    mods=$6/modules/usr/lib/modules
    k=$(ls -d "$mods"/*/kernel)
    release_chain "$1" "$2" "$3" "$4" "$5" "$(ls "$6"/binary/usr/lib/modules/*/vmlinuz | head -n 1)" "$mods" "$7" \
        "$k/lib/ts_fsm.ko.xz" "$k/lib/ts_kmp.ko.xz" "$k/lib/ts_bm.ko.xz" "$k/fs/efivarfs/efivarfs.ko.xz"
}
forky_chain forky x64 /usr/share/OVMF/OVMF_VARS_4M.ms.fd "$F/root/shim-signed/usr/lib/shim/shimx64.efi.signed" \
    "$F/root/grub-efi-amd64-signed/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed" "$F/signed-kernel" \
    "$(command -v busybox)"
forky_chain forky-aa64 aa64 /usr/share/AAVMF/AAVMF_VARS.ms.fd "$F/root/shim-signed-arm64/usr/lib/shim/shimaa64.efi.signed" \
    "$F/root/grub-efi-arm64-signed/usr/lib/grub/arm64-efi-signed/grubaa64.efi.signed" "$F/signed-kernel-arm64" \
    "$F/root/busybox-static-arm64/usr/bin/busybox"
finish

#!/bin/bash
# ctest-label: slow
# The differential test of test_boot_chain.sh beyond amd64, on the chains
# Debian boots with Microsoft's keys there:
# - 32-bit x86, as a machine with 32-bit UEFI boots bookworm: OVMF's ia32
#   build (qemu-system-i386), shimia32, grubia32 and the signed 686 kernel,
#   all three PE32 images, not PE32+; the kernel lists its build key with a
#   32-bit length word. OVMF32 has no store with Microsoft's keys: efi
#   enroll --microsoft writes one.
# - arm64, as trixie boots it: AAVMF with Microsoft's keys
#   (qemu-system-aarch64 -machine virt), shimaa64, grubaa64 and the signed
#   cloud kernel, an uncompressed Image whose list of built-in keys is
#   aligned to 256 bytes; its modules are .ko.xz.
# Each chain goes through release_chain_lib.sh's cases: it boots; its
# kernel, which has no .sbat, is refused when shim loads it itself, and
# with one byte changed; GRUB and the kernel re-signed with a MOK by
# reprosign boot, but not without the MOK in MokList. The boots' verdicts
# and reprosign chain's must agree; so must the locked-down kernel's on
# four modules and chain --modules', the names the kernel's log gives its
# built-in keys and chain's, and chain --efivars on the variables the
# kernel shows and chain --vars on the store it booted with. Every module
# of each kernel verifies by the build key chain reads out of its image.
. "$TESTS_DIR/lib.sh"
need_tool qemu-system-i386; need_tool qemu-system-aarch64; need_tool mkfs.vfat; need_tool mcopy; need_tool python3
need_tool jq; need_tool xz
[ -r /usr/share/OVMF/OVMF32_CODE_4M.secboot.fd ] && [ -r /usr/share/OVMF/OVMF_VARS_4M.ms.fd ] ||
    skip "ovmf and ovmf-ia32 are not installed"
[ -r /usr/share/AAVMF/AAVMF_CODE.fd ] && [ -r /usr/share/AAVMF/AAVMF_VARS.ms.fd ] || skip "qemu-efi-aarch64 is not installed"
need_fixtures bookworm-i386
need_fixtures trixie-bootchain
. "$TESTS_DIR/tools/boot-chain.sh"
. "$TESTS_DIR/interop/release_chain_lib.sh"
make_key PK; make_key KEK; make_key db

check "ia32: efi enroll --microsoft writes OVMF32's store, Microsoft's UEFI CA in db" "$REPROSIGN" efi enroll \
    --vars /usr/share/OVMF/OVMF32_VARS_4M.fd --pk "$WORK/PK.crt" --kek "$WORK/KEK.crt" --db "$WORK/db.crt" \
    --microsoft --timestamp 1700000000 --output "$WORK/vars32-ms.fd"
B=$FIXTURES/bookworm-i386
M=$(ls -d "$B"/signed-kernel/lib/modules/*/kernel)
release_chain ia32 ia32 "$WORK/vars32-ms.fd" "$B/root/shim-signed/usr/lib/shim/shimia32.efi.signed" \
    "$B/root/grub-efi-ia32-signed/usr/lib/grub/i386-efi-signed/grubia32.efi.signed" \
    "$(ls "$B"/signed-kernel/boot/vmlinuz-* | head -n 1)" "$B/signed-kernel/lib/modules" \
    "$B/root/busybox-static/bin/busybox" "$M/lib/crc7.ko" "$M/lib/ts_kmp.ko" "$M/lib/ts_bm.ko" "$M/fs/efivarfs/efivarfs.ko"
T=$FIXTURES/trixie
M=$(ls -d "$T"/signed-kernel-arm64/usr/lib/modules/*/kernel)
release_chain aa64 aa64 /usr/share/AAVMF/AAVMF_VARS.ms.fd "$T/root/shim-signed-arm64/usr/lib/shim/shimaa64.efi.signed" \
    "$T/root/grub-efi-arm64-signed/usr/lib/grub/arm64-efi-signed/grubaa64.efi.signed" \
    "$(ls "$T"/signed-kernel-arm64/boot/vmlinuz-* | head -n 1)" "$T/signed-kernel-arm64/usr/lib/modules" \
    "$T/root/busybox-static-arm64/usr/bin/busybox" "$M/lib/crc7.ko.xz" "$M/lib/ts_kmp.ko.xz" "$M/lib/ts_bm.ko.xz" \
    "$M/fs/efivarfs/efivarfs.ko.xz"
finish

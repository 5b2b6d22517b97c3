#!/bin/bash
# The differential test on 32-bit x86, as a machine with 32-bit UEFI boots
# Debian: OVMF's ia32 Secure Boot build (qemu-system-i386), its store from
# 'efi enroll --microsoft', boots bookworm's shim-signed (shimia32, signed
# by Microsoft's UEFI CA), grub-efi-ia32-signed and the signed 686 kernel
# into a busybox initramfs (i386 busybox). All three are PE32 images, not
# PE32+, and the kernel lists its build key with a 32-bit length word. For
# each case the boot's verdict and reprosign chain's must agree; for the
# modules, the locked-down kernel's and chain's; for the built-in keys, the
# names the kernel's log gives them and chain's.
. "$TESTS_DIR/lib.sh"
need_tool qemu-system-i386; need_tool mkfs.vfat; need_tool mcopy; need_tool python3; need_tool jq
[ -r /usr/share/OVMF/OVMF32_CODE_4M.secboot.fd ] && [ -r /usr/share/OVMF/OVMF_VARS_4M.ms.fd ] ||
    skip "ovmf and ovmf-ia32 are not installed"
need_fixtures bookworm-i386
CHAIN_ARCH=ia32
. "$TESTS_DIR/tools/boot-chain.sh"
B=$FIXTURES/bookworm-i386
SHIM=$B/root/shim-signed/usr/lib/shim/shimia32.efi.signed
GRUB=$B/root/grub-efi-ia32-signed/usr/lib/grub/i386-efi-signed/grubia32.efi.signed
KERNEL=$(ls "$B"/signed-kernel/boot/vmlinuz-* | head -n 1)
MODS=$(ls -d "$B"/signed-kernel/lib/modules/*/kernel)
BUSYBOX=$B/root/busybox-static/bin/busybox
make_key PK; make_key KEK; make_key db; make_key mok; make_key other

pe_magic() { python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read(4096); o = struct.unpack_from("<I", d, 0x3c)[0]
print("%04x %04x" % (struct.unpack_from("<H", d, o + 4)[0], struct.unpack_from("<H", d, o + 24)[0]))' "$1"; }
for f in "$SHIM" "$GRUB" "$KERNEL"; do
    check "$(basename "$f") is a PE32 image for i386 (machine 014c, optional header 010b)" \
        test "$(pe_magic "$f")" = "014c 010b"
done

# OVMF32 has no store with Microsoft's keys: efi enroll writes test PK and
# KEK, and a db of the test key and Microsoft's, read from OVMF's .ms store.
MSVARS=$WORK/vars32-ms.fd
check "efi enroll --microsoft: OVMF32's store with Microsoft's UEFI CA in db" "$REPROSIGN" efi enroll \
    --vars /usr/share/OVMF/OVMF32_VARS_4M.fd --pk "$WORK/PK.crt" --kek "$WORK/KEK.crt" --db "$WORK/db.crt" \
    --microsoft --timestamp 1700000000 --output "$MSVARS"

python3 "$TESTS_DIR/tools/mkinitramfs.py" "$WORK/initrd-plain.gz" "$BUSYBOX"
# 1. bookworm's i386 chain boots. 2. A kernel with one byte changed after
# signing is refused.
one_byte_changed "$KERNEL" "$WORK/vmlinuz.changed"
chain_esp debian "$SHIM" "$GRUB" "$KERNEL" "$WORK/initrd-plain.gz"
chain_esp changed "$SHIM" "$GRUB" "$WORK/vmlinuz.changed" "$WORK/initrd-plain.gz"
chain_boot debian "$MSVARS"; chain_boot changed "$MSVARS"
expect_boot debian booted "1. bookworm's i386 chain under Microsoft's UEFI CA boots to the initramfs" \
    --vars "$MSVARS" "$SHIM" "$GRUB" "$KERNEL"
expect_boot changed denied "2. a 686 kernel with one byte changed is refused" \
    --vars "$MSVARS" "$SHIM" "$GRUB" "$WORK/vmlinuz.changed"

# 3. MOK: GRUB and the kernel, both PE32, re-signed with a test MOK by
# reprosign, shim's MokList written by efi shim-var; under lockdown a
# MOK-signed module loads, an unsigned one and one signed with a foreign
# key are refused, and Debian's own efivarfs.ko loads by its build key.
mok_signed "$GRUB" "$KERNEL"
mkdir -p "$WORK/mod-mok" "$WORK/mod-none" "$WORK/mod-other" "$WORK/mod-debian"
"$REPROSIGN" strip "$MODS/lib/crc7.ko" --output "$WORK/crc7.unsigned"
"$REPROSIGN" sign --key "$WORK/mok.key" --cert "$WORK/mok.crt" "$WORK/crc7.unsigned" --output "$WORK/mod-mok/crc7.ko"
"$REPROSIGN" strip "$MODS/lib/ts_kmp.ko" --output "$WORK/mod-none/ts_kmp.ko"
"$REPROSIGN" strip "$MODS/lib/ts_bm.ko" --output "$WORK/ts_bm.unsigned"
"$REPROSIGN" sign --key "$WORK/other.key" --cert "$WORK/other.crt" "$WORK/ts_bm.unsigned" --output "$WORK/mod-other/ts_bm.ko"
cp "$MODS/fs/efivarfs/efivarfs.ko" "$WORK/mod-debian/"
python3 "$TESTS_DIR/tools/mkinitramfs.py" "$WORK/initrd-mods.gz" "$BUSYBOX" \
    "$WORK/mod-mok/crc7.ko" "$WORK/mod-none/ts_kmp.ko" "$WORK/mod-other/ts_bm.ko" "$WORK/mod-debian/efivarfs.ko"
chain_esp mok "$SHIM" "$WORK/grub.mok" "$WORK/vmlinuz.mok" "$WORK/initrd-mods.gz"
# 4. The MOK-signed GRUB without the MOK in MokList: shim refuses it.
chain_esp mok-absent "$SHIM" "$WORK/grub.mok" "$WORK/vmlinuz.mok" "$WORK/initrd-plain.gz"
chain_boot mok "$WORK/vars-mok.fd"; chain_boot mok-absent "$MSVARS"
MOKCHAIN=(--vars "$WORK/vars-mok.fd" "$SHIM" "$WORK/grub.mok" "$WORK/vmlinuz.mok")
expect_boot mok booted "3. GRUB and the 686 kernel signed with a MOK by reprosign boot" "${MOKCHAIN[@]}"
expect_boot mok-absent denied "4. without the MOK in MokList, shim refuses the MOK-signed GRUB" \
    --vars "$MSVARS" "$SHIM" "$WORK/grub.mok" "$WORK/vmlinuz.mok"
check "3. the kernel is locked down" grep -a -q 'lockdown: none \[integrity\]' "$WORK/boot-mok/serial.log"
module_agrees mok "$WORK/mod-mok" crc7.ko loaded "3. under lockdown, a module signed with the MOK loads" "${MOKCHAIN[@]}"
module_agrees mok "$WORK/mod-none" ts_kmp.ko refused "3. under lockdown, an unsigned module is refused" "${MOKCHAIN[@]}"
module_agrees mok "$WORK/mod-other" ts_bm.ko refused "3. under lockdown, a module signed with a foreign key is refused" \
    "${MOKCHAIN[@]}"
module_agrees mok "$WORK/mod-debian" efivarfs.ko loaded \
    "3. under lockdown, Debian's own efivarfs.ko loads by its build key, which chain reads from the 686 image" \
    "${MOKCHAIN[@]}"
builtin_keys_agree mok "3. the 686 kernel and chain name the same built-in keys" "${MOKCHAIN[@]}"
check "3. the MOK certificate is in .machine, from MokListRT" bash -c "
    grep -a -q 'MokListRT' '$WORK/boot-mok/serial.log' && grep -a -q 'asymmetri reprosign test mok' '$WORK/boot-mok/serial.log'"
EFIVARS=$WORK/efivars
python3 "$TESTS_DIR/tools/serial-efivars.py" "$WORK/boot-mok/serial.log" "$EFIVARS" >/dev/null
check "3. chain --efivars on the booted machine's variables judges as chain --vars" bash -c "
    '$REPROSIGN' chain --efivars '$EFIVARS' '$SHIM' '$WORK/grub.mok' '$WORK/vmlinuz.mok' >'$WORK/chain-efivars.out' &&
    grep -q '^variables: $EFIVARS (a running machine: SecureBoot on, SetupMode off)' '$WORK/chain-efivars.out' &&
    cmp <(grep '^stage' '$WORK/chain-efivars.out' | cut -d: -f1-2) \
        <('$REPROSIGN' chain ${MOKCHAIN[*]} | grep '^stage' | cut -d: -f1-2)"

# Every module of the 686 kernel, by the build key chain reads out of it;
# none by another key.
n=$(find "$B"/signed-kernel/lib/modules -name '*.ko' | wc -l)
check "chain verifies all $n modules of the 686 kernel by the build key in its image" bash -c "
    '$REPROSIGN' chain --vars '$MSVARS' '$SHIM' '$GRUB' '$KERNEL' --modules '$B/signed-kernel/lib/modules' |
        grep -q 'OK, $n verified (.builtin_trusted_keys $n,' && [ $n -gt 1000 ]"
check "... and refuses them all when --kernel-keys names another key instead" bash -c "
    ! '$REPROSIGN' chain --vars '$MSVARS' '$SHIM' '$GRUB' '$KERNEL' --modules '$B/signed-kernel/lib/modules' \
        --kernel-keys '$WORK/other.crt' >'$WORK/otherkey.out' &&
    grep -q 'FAILED, 0 verified .*, $n failed' '$WORK/otherkey.out'"
finish

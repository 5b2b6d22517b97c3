#!/bin/bash
# The differential test: reprosign chain against a real boot. OVMF's
# Secure Boot build with Microsoft's keys boots Debian's shim-signed,
# grub-efi-amd64-signed and the signed kernel of linux-image-amd64 into a
# busybox initramfs (tests/tools/mkinitramfs.py) that reports over serial.
# For each case the boot's verdict and chain's must agree. The slower
# cases are in test_boot_chain_slow.sh.
. "$TESTS_DIR/lib.sh"
need_tool qemu-system-x86_64; need_tool mkfs.vfat; need_tool mcopy; need_tool python3; need_tool busybox; need_tool jq
MSVARS=/usr/share/OVMF/OVMF_VARS_4M.ms.fd
[ -r "$MSVARS" ] || skip "ovmf is not installed"
need_fixtures bootchain
. "$TESTS_DIR/tools/boot-chain.sh"
SHIM=$FIXTURES/root/shim-signed/usr/lib/shim/shimx64.efi.signed
GRUB=$FIXTURES/root/grub-efi-amd64-signed/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed
KERNEL=$(ls "$FIXTURES"/signed-kernel/boot/vmlinuz-* | head -n 1)
MODS=$(ls -d "$FIXTURES"/signed-kernel/lib/modules/*/kernel)
BUSYBOX=$(command -v busybox)
make_key mok; make_key other

python3 "$TESTS_DIR/tools/mkinitramfs.py" "$WORK/initrd-plain.gz" "$BUSYBOX"

# 1 and 2. Debian's chain boots. Its kernel has no .sbat: shim accepts it
# through shim_lock, but refuses it when it loads it itself.
chain_esp debian "$SHIM" "$GRUB" "$KERNEL" "$WORK/initrd-plain.gz"
chain_esp kernel-by-shim "$SHIM" "$KERNEL" "$KERNEL" "$WORK/initrd-plain.gz"
chain_boot debian "$MSVARS"; chain_boot kernel-by-shim "$MSVARS"
expect_boot debian booted "1. Debian's chain under the Microsoft db boots to the initramfs" \
    --vars "$MSVARS" "$SHIM" "$GRUB" "$KERNEL"
refuses "2. the Debian kernel has no .sbat" "" "$REPROSIGN" sbat "$KERNEL"
check "2. chain: the kernel passes SBAT through shim_lock" bash -c "
    '$REPROSIGN' chain --vars '$MSVARS' '$SHIM' '$GRUB' '$KERNEL' | grep -q 'accepted through the shim_lock'"
expect_boot kernel-by-shim denied "2. the same kernel loaded by shim itself is refused (no .sbat)" \
    --vars "$MSVARS" "$SHIM" "$KERNEL"

# 4. MOK: a test certificate in MokList (written by efi shim-var); GRUB,
# the kernel and a module signed with it by reprosign. Under lockdown an
# unsigned module and one signed with a foreign key are refused.
mok_signed "$GRUB" "$KERNEL"
mkdir -p "$WORK/mod-mok" "$WORK/mod-none" "$WORK/mod-other"
"$REPROSIGN" strip "$MODS/lib/crc7.ko" --output "$WORK/crc7.unsigned"
"$REPROSIGN" sign --key "$WORK/mok.key" --cert "$WORK/mok.crt" "$WORK/crc7.unsigned" --output "$WORK/mod-mok/crc7.ko"
"$REPROSIGN" strip "$MODS/lib/crc8.ko" --output "$WORK/mod-none/crc8.ko"
"$REPROSIGN" strip "$MODS/lib/ts_kmp.ko" --output "$WORK/ts_kmp.unsigned"
"$REPROSIGN" sign --key "$WORK/other.key" --cert "$WORK/other.crt" "$WORK/ts_kmp.unsigned" --output "$WORK/mod-other/ts_kmp.ko"
# efivarfs.ko (Debian-signed) lets the initramfs print the variables it
# sees, for case 6.
python3 "$TESTS_DIR/tools/mkinitramfs.py" "$WORK/initrd-mods.gz" "$BUSYBOX" \
    "$WORK/mod-none/crc8.ko" "$WORK/mod-other/ts_kmp.ko" "$WORK/mod-mok/crc7.ko" "$MODS/fs/efivarfs/efivarfs.ko"
chain_esp mok "$SHIM" "$WORK/grub.mok" "$WORK/vmlinuz.mok" "$WORK/initrd-mods.gz"
# 5. One refusal: a kernel with one byte changed after signing.
one_byte_changed "$KERNEL" "$WORK/vmlinuz.changed"
chain_esp changed "$SHIM" "$GRUB" "$WORK/vmlinuz.changed" "$WORK/initrd-plain.gz"
chain_boot mok "$WORK/vars-mok.fd"; chain_boot changed "$MSVARS"
MOKCHAIN=(--vars "$WORK/vars-mok.fd" "$SHIM" "$WORK/grub.mok" "$WORK/vmlinuz.mok")
expect_boot mok booted "4. MOK-signed GRUB and kernel boot" "${MOKCHAIN[@]}"
expect_boot changed denied "5. a kernel with one byte changed is refused" --vars "$MSVARS" "$SHIM" "$GRUB" \
    "$WORK/vmlinuz.changed"

module_agrees mok "$WORK/mod-mok" crc7.ko loaded "4. under lockdown, a module signed with the MOK key loads" "${MOKCHAIN[@]}"
module_agrees mok "$WORK/mod-none" crc8.ko refused "4. under lockdown, an unsigned module is refused" "${MOKCHAIN[@]}"
module_agrees mok "$WORK/mod-other" ts_kmp.ko refused "4. under lockdown, a module signed with a foreign key is refused" \
    "${MOKCHAIN[@]}"
mkdir -p "$WORK/mod-debian" && cp "$MODS/fs/efivarfs/efivarfs.ko" "$WORK/mod-debian/"
module_agrees mok "$WORK/mod-debian" efivarfs.ko loaded \
    "4. under lockdown, Debian's own efivarfs.ko loads by its build key, which chain reads from the kernel image" \
    "${MOKCHAIN[@]}"
builtin_keys_agree mok "4. the kernel and chain name the same built-in keys" "${MOKCHAIN[@]}"
# Every module of Debian's kernel, by the build key chain reads out of it.
n=$(find "$FIXTURES"/signed-kernel/lib/modules -name '*.ko' | wc -l)
check "4. chain verifies all $n modules of Debian's kernel by the build key in its image" bash -c "
    '$REPROSIGN' chain --vars '$MSVARS' '$SHIM' '$GRUB' '$KERNEL' --modules '$FIXTURES/signed-kernel/lib/modules' |
        grep -q 'OK, $n verified (.builtin_trusted_keys $n,' && [ $n -gt 1000 ]"
check "4. the kernel is locked down" grep -a -q 'lockdown: none \[integrity\]' "$WORK/boot-mok/serial.log"
check "4. the MOK certificate is in .machine, from MokListRT" bash -c "
    grep -a -q 'MokListRT' '$WORK/boot-mok/serial.log' && grep -a -q 'asymmetri reprosign test mok' '$WORK/boot-mok/serial.log'"

# 6. The variables the booted kernel showed in efivarfs (copied out over
# the serial console) are the store it booted with: efi list --efivars
# decodes the same PK, KEK, db and dbx as efi list --vars, MokListRT holds
# the MOK certificate and shim's vendor certificate, and chain --efivars
# gives the same verdicts as chain --vars.
EFIVARS=$WORK/efivars
python3 "$TESTS_DIR/tools/serial-efivars.py" "$WORK/boot-mok/serial.log" "$EFIVARS" >/dev/null
for v in PK KEK db dbx; do
    check "6. efivarfs $v as the booted kernel showed it lists as the store's $v" bash -c "
        cmp <('$REPROSIGN' efi list --efivars '$EFIVARS' --name $v | grep '^    list ') \
            <('$REPROSIGN' efi list --vars '$WORK/vars-mok.fd' --name $v | grep '^    list ') &&
        [ -n \"\$('$REPROSIGN' efi list --efivars '$EFIVARS' --name $v | grep '^    list ')\" ]"
done
check "6. efivarfs MokListRT holds the MOK certificate and shim's vendor certificate" bash -c "
    '$REPROSIGN' efi list --efivars '$EFIVARS' --name MokListRT >'$WORK/mokrt.txt' &&
    grep -q 'CN=reprosign test mok' '$WORK/mokrt.txt' && grep -q 'CN=Debian Secure Boot CA' '$WORK/mokrt.txt'"
check "6. efivarfs shows Secure Boot on, out of setup mode" bash -c "
    '$REPROSIGN' efi list --efivars '$EFIVARS' | grep -q '^SecureBoot 8be4df61-93ca-11d2-aa0d-00e098032b8c BS,RT 1 bytes: 1\$' &&
    '$REPROSIGN' efi list --efivars '$EFIVARS' | grep -q '^SetupMode 8be4df61-93ca-11d2-aa0d-00e098032b8c BS,RT 1 bytes: 0\$'"
check "6. chain --efivars on the booted machine's variables judges as chain --vars" bash -c "
    '$REPROSIGN' chain --efivars '$EFIVARS' '$SHIM' '$WORK/grub.mok' '$WORK/vmlinuz.mok' >'$WORK/chain-efivars.out' &&
    grep -q '^variables: $EFIVARS (a running machine: SecureBoot on, SetupMode off)' '$WORK/chain-efivars.out' &&
    cmp <(grep '^stage' '$WORK/chain-efivars.out' | cut -d: -f1-2) \
        <('$REPROSIGN' chain ${MOKCHAIN[*]} | grep '^stage' | cut -d: -f1-2)"
check "6. chain --efivars refuses the changed kernel as chain --vars does" bash -c "
    ! '$REPROSIGN' chain --efivars '$EFIVARS' '$SHIM' '$GRUB' '$WORK/vmlinuz.changed' >/dev/null 2>&1"
finish

#!/bin/bash
# The differential test of test_boot_chain.sh on trixie's chain: OVMF's
# Secure Boot build with Microsoft's keys boots trixie's shim-signed (shim
# 16.1), grub-efi-amd64-signed (GRUB 2.12, which loads the kernel with its
# own PE loader and verifies it through shim_lock) and the signed cloud
# kernel (Linux 6.12) into a busybox initramfs. For each case the boot's
# verdict and reprosign chain's must agree; for the modules, compressed
# with xz as trixie ships them, the kernel's under lockdown and chain's;
# for the keys built into the kernel, the names its log gives them and
# chain's. trixie's arm64 kernel gives its build key the same way.
. "$TESTS_DIR/lib.sh"
need_tool qemu-system-x86_64; need_tool mkfs.vfat; need_tool mcopy; need_tool python3; need_tool busybox; need_tool xz; need_tool jq
MSVARS=/usr/share/OVMF/OVMF_VARS_4M.ms.fd
[ -r "$MSVARS" ] || skip "ovmf is not installed"
need_fixtures trixie-bootchain
. "$TESTS_DIR/tools/boot-chain.sh"
T=$FIXTURES/trixie
SHIM=$T/root/shim-signed/usr/lib/shim/shimx64.efi.signed
GRUB=$T/root/grub-efi-amd64-signed/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed
KERNEL=$(ls "$T"/signed-kernel/boot/vmlinuz-* | head -n 1)
make_key mok

python3 "$TESTS_DIR/tools/mkinitramfs.py" "$WORK/initrd.gz" "$(command -v busybox)"
# Three of trixie's own modules, as it ships them (name.ko.xz), re-signed:
# with the MOK, not at all, and with a foreign key; the MOK boot tries them.
MODS=$(ls -d "$T"/signed-kernel/usr/lib/modules/*/kernel/lib)
resigned_xz() {  # resigned_xz MODULE KEY|none OUT.ko.xz
    mkdir -p "$(dirname "$3")"
    xz -dc "$MODS/$1.ko.xz" >"$WORK/$1.ko" && "$REPROSIGN" strip "$WORK/$1.ko" --output "$WORK/$1.unsigned" &&
        if [ "$2" = none ]; then cp "$WORK/$1.unsigned" "$WORK/$1.out"
        else "$REPROSIGN" sign --key "$WORK/$2.key" --cert "$WORK/$2.crt" "$WORK/$1.unsigned" --output "$WORK/$1.out"; fi &&
        xz -c "$WORK/$1.out" >"$3"
}
make_key other
resigned_xz crc7 mok "$WORK/mod-mok/crc7.ko.xz"
resigned_xz ts_kmp none "$WORK/mod-none/ts_kmp.ko.xz"
resigned_xz ts_bm other "$WORK/mod-other/ts_bm.ko.xz"
# And one as Debian built it, signed with the key made for that build,
# whose certificate is in the kernel image (its .builtin_trusted_keys):
# chain reads it from there.
mkdir -p "$WORK/mod-debian" && cp "$MODS/crc-itu-t.ko.xz" "$WORK/mod-debian/"
python3 "$TESTS_DIR/tools/mkinitramfs.py" "$WORK/initrd-mods.gz" "$(command -v busybox)" \
    "$WORK/mod-mok/crc7.ko.xz" "$WORK/mod-none/ts_kmp.ko.xz" "$WORK/mod-other/ts_bm.ko.xz" "$WORK/mod-debian/crc-itu-t.ko.xz"

# 1. trixie's chain boots. 2. Its kernel has no .sbat: shim refuses it
# when it loads it itself.
chain_esp debian "$SHIM" "$GRUB" "$KERNEL" "$WORK/initrd.gz"
chain_esp kernel-by-shim "$SHIM" "$KERNEL" "$KERNEL" "$WORK/initrd.gz"
chain_boot debian "$MSVARS"; chain_boot kernel-by-shim "$MSVARS"
expect_boot debian booted "1. trixie's chain under the Microsoft db boots to the initramfs" \
    --vars "$MSVARS" "$SHIM" "$GRUB" "$KERNEL"
refuses "2. trixie's kernel has no .sbat" "" "$REPROSIGN" sbat "$KERNEL"
expect_boot kernel-by-shim denied "2. the same kernel loaded by shim itself is refused (no .sbat)" \
    --vars "$MSVARS" "$SHIM" "$KERNEL"

# 3. MOK: trixie's GRUB and kernel re-signed with a test MOK by reprosign,
# shim's MokList written by efi shim-var. 4. A kernel with one byte
# changed after signing.
mok_signed "$GRUB" "$KERNEL"
one_byte_changed "$KERNEL" "$WORK/vmlinuz.changed"
chain_esp mok "$SHIM" "$WORK/grub.mok" "$WORK/vmlinuz.mok" "$WORK/initrd-mods.gz"
chain_esp changed "$SHIM" "$GRUB" "$WORK/vmlinuz.changed" "$WORK/initrd.gz"
chain_boot mok "$WORK/vars-mok.fd"; chain_boot changed "$MSVARS"
expect_boot mok booted "3. trixie's GRUB and kernel signed with a MOK by reprosign boot" \
    --vars "$WORK/vars-mok.fd" "$SHIM" "$WORK/grub.mok" "$WORK/vmlinuz.mok"
expect_boot changed denied "4. a kernel with one byte changed is refused" \
    --vars "$MSVARS" "$SHIM" "$GRUB" "$WORK/vmlinuz.changed"
MOKCHAIN=(--vars "$WORK/vars-mok.fd" "$SHIM" "$WORK/grub.mok" "$WORK/vmlinuz.mok")
module_agrees mok "$WORK/mod-mok" crc7.ko.xz loaded "3. under lockdown, a MOK-signed module.ko.xz loads" "${MOKCHAIN[@]}"
module_agrees mok "$WORK/mod-none" ts_kmp.ko.xz refused "3. under lockdown, an unsigned module.ko.xz is refused" \
    "${MOKCHAIN[@]}"
module_agrees mok "$WORK/mod-other" ts_bm.ko.xz refused "3. under lockdown, a module.ko.xz signed with a foreign key is refused" \
    "${MOKCHAIN[@]}"
module_agrees mok "$WORK/mod-debian" crc-itu-t.ko.xz loaded \
    "3. under lockdown, Debian's own crc-itu-t.ko.xz loads by its build key, which chain reads from the kernel image" \
    "${MOKCHAIN[@]}"
check "3. the kernel is locked down" grep -a -q 'lockdown: none \[integrity\]' "$WORK/boot-mok/serial.log"
builtin_keys_agree mok "3. the kernel and chain name the same built-in keys" "${MOKCHAIN[@]}"
# Every module of trixie's kernel, as the kernel checks it: by the build
# key read from the kernel image, and by nothing without it.
n=$(find "$T"/signed-kernel/usr/lib/modules -name '*.ko.xz' | wc -l)
check "chain verifies all $n modules of trixie's kernel (.ko.xz) by the build key in its image" bash -c "
    '$REPROSIGN' chain --vars '$MSVARS' '$SHIM' '$GRUB' '$KERNEL' --modules '$T/signed-kernel/usr/lib/modules' \
        | grep -q 'OK, $n verified (.builtin_trusted_keys $n,' && [ $n -gt 1000 ]"
check "... and refuses them all when --kernel-keys names another key instead" bash -c "
    ! '$REPROSIGN' chain --vars '$MSVARS' '$SHIM' '$GRUB' '$KERNEL' --modules '$T/signed-kernel/usr/lib/modules' \
        --kernel-keys '$WORK/other.crt' >'$WORK/otherkey.out' &&
    grep -q 'FAILED, 0 verified .*, $n failed' '$WORK/otherkey.out'"
check "... and when the last stage is no kernel image, saying the build key is missing" bash -c "
    ! '$REPROSIGN' chain --vars '$MSVARS' '$SHIM' '$GRUB' --modules '$T/signed-kernel/usr/lib/modules' >'$WORK/nokey.out' &&
    grep -q 'FAILED, 0 verified .*, $n failed' '$WORK/nokey.out' &&
    grep -q 'the last stage is no kernel image it can read, and no --kernel-keys gives the kernel.s build certificates' '$WORK/nokey.out'"
# trixie's arm64 kernel is an Image, not compressed, where `.align 8`
# means 256 bytes: every one of its modules verifies by the build key
# chain reads out of it (its chain, an arm64 one, is not judged here).
A64=$(ls "$T"/signed-kernel-arm64/boot/vmlinuz-* | head -n 1)
n64=$(find "$T"/signed-kernel-arm64/usr/lib/modules -name '*.ko.xz' | wc -l)
"$REPROSIGN" chain --vars "$MSVARS" "$A64" --modules "$T/signed-kernel-arm64/usr/lib/modules" --json >"$WORK/a64.json" 2>"$WORK/a64.err" || true
check "chain verifies all $n64 modules of trixie's arm64 kernel by the build key in its Image" \
    jq -e --argjson n "$n64" '.modules.builtin_keys.from == "image" and .modules.verified == $n and
        .modules.failed == 0 and $n > 1000' "$WORK/a64.json"
# 5. The same MOK-signed GRUB without the MokList: shim refuses it.
chain_esp mok-absent "$SHIM" "$WORK/grub.mok" "$WORK/vmlinuz.mok" "$WORK/initrd.gz"
chain_boot mok-absent "$MSVARS"
expect_boot mok-absent denied "5. without the MOK in MokList, shim refuses the MOK-signed GRUB" \
    --vars "$MSVARS" "$SHIM" "$WORK/grub.mok" "$WORK/vmlinuz.mok"
finish

#!/bin/bash
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
# Each chain boots, with one byte changed in its kernel is refused, and
# with GRUB and the kernel re-signed with a MOK by reprosign boots, but not
# without the MOK in MokList. The boots' verdicts and reprosign chain's
# must agree; so must the locked-down kernel's on four modules and chain
# --modules', the names the kernel's log gives its built-in keys and
# chain's, and chain --efivars on the variables the kernel shows and
# chain --vars on the store it booted with. Every module of each kernel
# verifies by the build key chain reads out of its image.
. "$TESTS_DIR/lib.sh"
need_tool qemu-system-i386; need_tool qemu-system-aarch64; need_tool mkfs.vfat; need_tool mcopy; need_tool python3
need_tool jq; need_tool xz
[ -r /usr/share/OVMF/OVMF32_CODE_4M.secboot.fd ] && [ -r /usr/share/OVMF/OVMF_VARS_4M.ms.fd ] ||
    skip "ovmf and ovmf-ia32 are not installed"
[ -r /usr/share/AAVMF/AAVMF_CODE.fd ] && [ -r /usr/share/AAVMF/AAVMF_VARS.ms.fd ] || skip "qemu-efi-aarch64 is not installed"
need_fixtures bookworm-i386
need_fixtures trixie-bootchain
. "$TESTS_DIR/tools/boot-chain.sh"
make_key PK; make_key KEK; make_key db; make_key mok; make_key other

pe_magic() { python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read(4096); o = struct.unpack_from("<I", d, 0x3c)[0]
print("%04x %04x" % (struct.unpack_from("<H", d, o + 4)[0], struct.unpack_from("<H", d, o + 24)[0]))' "$1"; }

# resigned MODULE KEY|none OUT: the kernel's MODULE (name.ko or name.ko.xz)
# stripped and signed with KEY (or left unsigned), compressed as it came.
resigned() {
    local m=$1 plain
    plain=$WORK/$(basename "${1%.xz}")
    mkdir -p "$(dirname "$3")"
    case $m in *.xz) xz -dc "$m" >"$plain.in" ;; *) cp "$m" "$plain.in" ;; esac
    "$REPROSIGN" strip "$plain.in" --output "$plain.unsigned" &&
        if [ "$2" = none ]; then cp "$plain.unsigned" "$plain.out"
        else "$REPROSIGN" sign --key "$WORK/$2.key" --cert "$WORK/$2.crt" "$plain.unsigned" --output "$plain.out"; fi &&
        case $m in *.xz) xz -c "$plain.out" >"$3" ;; *) cp "$plain.out" "$3" ;; esac
}

# arch_chain ARCH VARS SHIM GRUB KERNEL MODULES BUSYBOX: every case on one
# chain. MODULES is the kernel's module tree (lib/modules); its modules'
# names end as the kernel's own do.
arch_chain() {
    local a=$1 vars=$2 shim=$3 grub=$4 kernel=$5 tree=$6 busybox=$7 mods ext n f
    # shellcheck disable=SC2034  # read by boot-chain.sh's functions
    CHAIN_ARCH=$a MSVARS=$vars
    mods=$(ls -d "$tree"/*/kernel)
    if [ -e "$mods/lib/crc7.ko" ]; then ext=.ko; else ext=.ko.xz; fi
    for f in "$shim" "$grub" "$kernel"; do
        check "$a: $(basename "$f") is a PE image for $a ($(pe_magic "$f"))" \
            test "$(pe_magic "$f")" = "$([ "$a" = ia32 ] && echo "014c 010b" || echo "aa64 020b")"
    done
    python3 "$TESTS_DIR/tools/mkinitramfs.py" "$WORK/$a-initrd.gz" "$busybox"
    # 1. The chain boots. 2. A kernel with one byte changed after signing
    # is refused.
    one_byte_changed "$kernel" "$WORK/$a-vmlinuz.changed"
    chain_esp "$a-debian" "$shim" "$grub" "$kernel" "$WORK/$a-initrd.gz"
    chain_esp "$a-changed" "$shim" "$grub" "$WORK/$a-vmlinuz.changed" "$WORK/$a-initrd.gz"
    chain_boot "$a-debian" "$vars"; chain_boot "$a-changed" "$vars"
    expect_boot "$a-debian" booted "1. $a: Debian's chain under Microsoft's UEFI CA boots to the initramfs" \
        --vars "$vars" "$shim" "$grub" "$kernel"
    expect_boot "$a-changed" denied "2. $a: a kernel with one byte changed is refused" \
        --vars "$vars" "$shim" "$grub" "$WORK/$a-vmlinuz.changed"

    # 3. MOK: GRUB and the kernel re-signed with a test MOK by reprosign,
    # shim's MokList written by efi shim-var; under lockdown a MOK-signed
    # module loads, an unsigned one and one signed with a foreign key are
    # refused, and Debian's own efivarfs loads by its build key (and shows
    # the variables). 4. The MOK-signed GRUB without the MOK in MokList.
    mok_signed "$grub" "$kernel"
    resigned "$mods/lib/crc7$ext" mok "$WORK/$a-mod-mok/crc7$ext"
    resigned "$mods/lib/ts_kmp$ext" none "$WORK/$a-mod-none/ts_kmp$ext"
    resigned "$mods/lib/ts_bm$ext" other "$WORK/$a-mod-other/ts_bm$ext"
    mkdir -p "$WORK/$a-mod-debian" && cp "$mods/fs/efivarfs/efivarfs$ext" "$WORK/$a-mod-debian/"
    python3 "$TESTS_DIR/tools/mkinitramfs.py" "$WORK/$a-initrd-mods.gz" "$busybox" "$WORK/$a-mod-mok/crc7$ext" \
        "$WORK/$a-mod-none/ts_kmp$ext" "$WORK/$a-mod-other/ts_bm$ext" "$WORK/$a-mod-debian/efivarfs$ext"
    chain_esp "$a-mok" "$shim" "$WORK/grub.mok" "$WORK/vmlinuz.mok" "$WORK/$a-initrd-mods.gz"
    chain_esp "$a-mok-absent" "$shim" "$WORK/grub.mok" "$WORK/vmlinuz.mok" "$WORK/$a-initrd.gz"
    chain_boot "$a-mok" "$WORK/vars-mok.fd"; chain_boot "$a-mok-absent" "$vars"
    local chain=(--vars "$WORK/vars-mok.fd" "$shim" "$WORK/grub.mok" "$WORK/vmlinuz.mok")
    expect_boot "$a-mok" booted "3. $a: GRUB and the kernel signed with a MOK by reprosign boot" "${chain[@]}"
    expect_boot "$a-mok-absent" denied "4. $a: without the MOK in MokList, shim refuses the MOK-signed GRUB" \
        --vars "$vars" "$shim" "$WORK/grub.mok" "$WORK/vmlinuz.mok"
    check "3. $a: the kernel is locked down" grep -a -q 'lockdown: none \[integrity\]' "$WORK/boot-$a-mok/serial.log"
    module_agrees "$a-mok" "$WORK/$a-mod-mok" "crc7$ext" loaded "3. $a: under lockdown, a module signed with the MOK loads" \
        "${chain[@]}"
    module_agrees "$a-mok" "$WORK/$a-mod-none" "ts_kmp$ext" refused "3. $a: under lockdown, an unsigned module is refused" \
        "${chain[@]}"
    module_agrees "$a-mok" "$WORK/$a-mod-other" "ts_bm$ext" refused \
        "3. $a: under lockdown, a module signed with a foreign key is refused" "${chain[@]}"
    module_agrees "$a-mok" "$WORK/$a-mod-debian" "efivarfs$ext" loaded \
        "3. $a: under lockdown, Debian's own efivarfs$ext loads by its build key, which chain reads from the kernel image" \
        "${chain[@]}"
    builtin_keys_agree "$a-mok" "3. $a: the kernel and chain name the same built-in keys" "${chain[@]}"
    check "3. $a: the MOK certificate is in .machine, from MokListRT" bash -c "
        grep -a -q 'MokListRT' '$WORK/boot-$a-mok/serial.log' &&
        grep -a -q 'asymmetri reprosign test mok' '$WORK/boot-$a-mok/serial.log'"
    python3 "$TESTS_DIR/tools/serial-efivars.py" "$WORK/boot-$a-mok/serial.log" "$WORK/$a-efivars" >/dev/null
    check "3. $a: chain --efivars on the booted machine's variables judges as chain --vars" bash -c "
        '$REPROSIGN' chain --efivars '$WORK/$a-efivars' '$shim' '$WORK/grub.mok' '$WORK/vmlinuz.mok' >'$WORK/$a-efivars.out' &&
        grep -q '^variables: $WORK/$a-efivars (a running machine: SecureBoot on, SetupMode off)' '$WORK/$a-efivars.out' &&
        cmp <(grep '^stage' '$WORK/$a-efivars.out' | cut -d: -f1-2) \
            <('$REPROSIGN' chain ${chain[*]} | grep '^stage' | cut -d: -f1-2)"

    # Every module of the kernel, by the build key chain reads out of it;
    # none by another key.
    n=$(find "$tree" -name "*$ext" | wc -l)
    check "$a: chain verifies all $n modules of the kernel by the build key in its image" bash -c "
        '$REPROSIGN' chain --vars '$vars' '$shim' '$grub' '$kernel' --modules '$tree' |
            grep -q 'OK, $n verified (.builtin_trusted_keys $n,' && [ $n -gt 1000 ]"
    check "$a: ... and refuses them all when --kernel-keys names another key instead" bash -c "
        ! '$REPROSIGN' chain --vars '$vars' '$shim' '$grub' '$kernel' --modules '$tree' \
            --kernel-keys '$WORK/other.crt' >'$WORK/$a-otherkey.out' &&
        grep -q 'FAILED, 0 verified .*, $n failed' '$WORK/$a-otherkey.out'"
}

check "ia32: efi enroll --microsoft writes OVMF32's store, Microsoft's UEFI CA in db" "$REPROSIGN" efi enroll \
    --vars /usr/share/OVMF/OVMF32_VARS_4M.fd --pk "$WORK/PK.crt" --kek "$WORK/KEK.crt" --db "$WORK/db.crt" \
    --microsoft --timestamp 1700000000 --output "$WORK/vars32-ms.fd"
B=$FIXTURES/bookworm-i386
arch_chain ia32 "$WORK/vars32-ms.fd" "$B/root/shim-signed/usr/lib/shim/shimia32.efi.signed" \
    "$B/root/grub-efi-ia32-signed/usr/lib/grub/i386-efi-signed/grubia32.efi.signed" \
    "$(ls "$B"/signed-kernel/boot/vmlinuz-* | head -n 1)" "$B/signed-kernel/lib/modules" \
    "$B/root/busybox-static/bin/busybox"
T=$FIXTURES/trixie
arch_chain aa64 /usr/share/AAVMF/AAVMF_VARS.ms.fd "$T/root/shim-signed-arm64/usr/lib/shim/shimaa64.efi.signed" \
    "$T/root/grub-efi-arm64-signed/usr/lib/grub/arm64-efi-signed/grubaa64.efi.signed" \
    "$(ls "$T"/signed-kernel-arm64/boot/vmlinuz-* | head -n 1)" "$T/signed-kernel-arm64/usr/lib/modules" \
    "$T/root/busybox-static-arm64/usr/bin/busybox"
finish

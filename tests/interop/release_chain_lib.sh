# The differential test of a Debian release's own signed chain, shared by
# test_boot_chain.sh (bookworm), test_boot_chain_trixie.sh,
# test_boot_chain_forky.sh and test_boot_chain_arches.sh. Source after
# lib.sh and tests/tools/boot-chain.sh.
#   release_chain LABEL ARCH VARS SHIM GRUB KERNEL MODULES BUSYBOX MOK-MOD NONE-MOD OTHER-MOD EFIVARFS-MOD
# The firmware for ARCH (x64, ia32 or aa64: boot-chain.sh's CHAIN_ARCH),
# its store VARS holding Microsoft's keys, boots the release's shim-signed,
# GRUB and signed kernel into an initramfs running BUSYBOX. For each case
# the boot's verdict and reprosign chain's must agree; for the modules
# (MODULES, the kernel's lib/modules; the four *-MOD are module files
# under it, .ko or .ko.xz, the first three re-signed with a MOK, not at
# all and with a foreign key, the last Debian's efivarfs module as built;
# and the MOK-signed one changed after signing),
# the kernel's under lockdown and chain's; for the keys built into the
# kernel, the names its log gives them and chain's; for the variables the
# booted kernel shows, chain --efivars and chain --vars. LABEL names the
# chain in each check and in $WORK.

# unpacked MODULE PLAIN: MODULE (.ko or .ko.xz) as a plain .ko in PLAIN;
# packed_like MODULE PLAIN OUT: PLAIN into OUT, compressed as MODULE came.
unpacked() { case $1 in *.xz) xz -dc "$1" >"$2" ;; *) cp "$1" "$2" ;; esac; }
packed_like() { mkdir -p "$(dirname "$3")" && case $1 in *.xz) xz -c "$2" >"$3" ;; *) cp "$2" "$3" ;; esac; }

# resigned MODULE KEY|none OUT: MODULE stripped and signed with KEY (or
# left unsigned), compressed as it came.
resigned() {
    local plain
    plain=$WORK/$(basename "${1%.xz}")
    unpacked "$1" "$plain.in"
    "$REPROSIGN" strip "$plain.in" --output "$plain.unsigned" &&
        if [ "$2" = none ]; then cp "$plain.unsigned" "$plain.out"
        else "$REPROSIGN" sign --key "$WORK/$2.key" --cert "$WORK/$2.crt" "$plain.unsigned" --output "$plain.out"; fi &&
        packed_like "$1" "$plain.out" "$3"
}

# changed_after_signing MODULE OUT: MODULE (.ko or .ko.xz) with byte 100
# (past the ELF header) changed; compressed as it came.
changed_after_signing() {
    local plain=$WORK/changed.ko
    unpacked "$1" "$plain"
    printf 'X' | dd of="$plain" bs=1 seek=100 conv=notrunc status=none
    packed_like "$1" "$plain" "$2"
}

pe_magic() {  # pe_magic IMAGE: its COFF machine and optional header magic, in hex
    python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read(4096); o = struct.unpack_from("<I", d, 0x3c)[0]
print("%04x %04x" % (struct.unpack_from("<H", d, o + 4)[0], struct.unpack_from("<H", d, o + 24)[0]))' "$1"
}

release_chain() {
    local l=$1 vars=$3 shim=$4 grub=$5 kernel=$6 tree=$7 busybox=$8 f n want
    local m_mok m_none m_other m_efi
    m_mok=$(basename "$9") m_none=$(basename "${10}") m_other=$(basename "${11}") m_efi=$(basename "${12}")
    # shellcheck disable=SC2034  # read by boot-chain.sh's functions
    CHAIN_ARCH=$2 MSVARS=$vars
    [ -e "$WORK/mok.key" ] || make_key mok
    [ -e "$WORK/other.key" ] || make_key other
    case $2 in ia32) want="014c 010b" ;; aa64) want="aa64 020b" ;; *) want="8664 020b" ;; esac
    for f in "$shim" "$grub" "$kernel"; do
        check "$l: $(basename "$f") is a PE image for $2 ($(pe_magic "$f"))" test "$(pe_magic "$f")" = "$want"
    done
    python3 "$TESTS_DIR/tools/mkinitramfs.py" "$WORK/$l-initrd.gz" "$busybox"
    resigned "$9" mok "$WORK/$l-mod-mok/$m_mok"
    resigned "${10}" none "$WORK/$l-mod-none/$m_none"
    resigned "${11}" other "$WORK/$l-mod-other/$m_other"
    # The MOK-signed module with one byte changed after signing: its key is
    # found, and the signature fails there (-EKEYREJECTED).
    changed_after_signing "$WORK/$l-mod-mok/$m_mok" "$WORK/$l-mod-changed/changed-$m_mok"
    # Debian's own efivarfs module, signed with the key made for that
    # build, whose certificate is in the kernel image
    # (.builtin_trusted_keys): chain reads it from there. Loaded, it lets
    # the initramfs print the variables it sees, for case 6.
    mkdir -p "$WORK/$l-mod-debian" && cp "${12}" "$WORK/$l-mod-debian/"
    python3 "$TESTS_DIR/tools/mkinitramfs.py" "$WORK/$l-initrd-mods.gz" "$busybox" "$WORK/$l-mod-mok/$m_mok" \
        "$WORK/$l-mod-none/$m_none" "$WORK/$l-mod-other/$m_other" "$WORK/$l-mod-debian/$m_efi" \
        "$WORK/$l-mod-changed/changed-$m_mok"

    # 1. The chain boots. 2. Its kernel has no .sbat: shim accepts it
    # through shim_lock, but refuses it when it loads it itself.
    chain_esp "$l-debian" "$shim" "$grub" "$kernel" "$WORK/$l-initrd.gz"
    chain_esp "$l-kernel-by-shim" "$shim" "$kernel" "$kernel" "$WORK/$l-initrd.gz"
    chain_boot "$l-debian" "$vars"; chain_boot "$l-kernel-by-shim" "$vars"
    expect_boot "$l-debian" booted "1. $l: the chain under Microsoft's UEFI CA boots to the initramfs" \
        --vars "$vars" "$shim" "$grub" "$kernel"
    refuses "2. $l: the kernel has no .sbat" "" "$REPROSIGN" sbat "$kernel"
    check "2. $l: chain: the kernel passes SBAT through shim_lock" bash -c "
        '$REPROSIGN' chain --vars '$vars' '$shim' '$grub' '$kernel' | grep -q 'accepted through the shim_lock'"
    expect_boot "$l-kernel-by-shim" denied "2. $l: the same kernel loaded by shim itself is refused (no .sbat)" \
        --vars "$vars" "$shim" "$kernel"

    # 3. MOK: GRUB and the kernel re-signed with a test MOK by reprosign,
    # shim's MokList written by efi shim-var. 4. A kernel with one byte
    # changed after signing.
    mok_signed "$grub" "$kernel"
    one_byte_changed "$kernel" "$WORK/$l-vmlinuz.changed"
    chain_esp "$l-mok" "$shim" "$WORK/grub.mok" "$WORK/vmlinuz.mok" "$WORK/$l-initrd-mods.gz"
    chain_esp "$l-changed" "$shim" "$grub" "$WORK/$l-vmlinuz.changed" "$WORK/$l-initrd.gz"
    chain_boot "$l-mok" "$WORK/vars-mok.fd"; chain_boot "$l-changed" "$vars"
    local mokchain=(--vars "$WORK/vars-mok.fd" "$shim" "$WORK/grub.mok" "$WORK/vmlinuz.mok")
    expect_boot "$l-mok" booted "3. $l: GRUB and the kernel signed with a MOK by reprosign boot" "${mokchain[@]}"
    expect_boot "$l-changed" denied "4. $l: a kernel with one byte changed is refused" \
        --vars "$vars" "$shim" "$grub" "$WORK/$l-vmlinuz.changed"
    check "3. $l: the kernel is locked down" grep -a -q 'lockdown: none \[integrity\]' "$WORK/boot-$l-mok/serial.log"
    module_agrees "$l-mok" "$WORK/$l-mod-mok" "$m_mok" loaded "3. $l: under lockdown, a module signed with the MOK loads" \
        "${mokchain[@]}"
    module_agrees "$l-mok" "$WORK/$l-mod-none" "$m_none" refused "3. $l: under lockdown, an unsigned module is refused" \
        "${mokchain[@]}"
    module_agrees "$l-mok" "$WORK/$l-mod-other" "$m_other" refused \
        "3. $l: under lockdown, a module signed with a foreign key is refused" "${mokchain[@]}"
    module_agrees "$l-mok" "$WORK/$l-mod-changed" "changed-$m_mok" refused \
        "3. $l: under lockdown, the MOK-signed module with one byte changed after signing is refused" "${mokchain[@]}"
    check "3. $l: ... chain: by the MOK's own key in .machine, not for a missing key" \
        grep -q "its signer's key is in .machine, but the signature does not verify with it" "$WORK/mod.out"
    module_agrees "$l-mok" "$WORK/$l-mod-debian" "$m_efi" loaded \
        "3. $l: under lockdown, Debian's own $m_efi loads by its build key, which chain reads from the kernel image" \
        "${mokchain[@]}"
    builtin_keys_agree "$l-mok" "3. $l: the kernel and chain name the same built-in keys" "${mokchain[@]}"
    check "3. $l: the MOK certificate is in .machine, from MokListRT" bash -c "
        grep -a -q 'MokListRT' '$WORK/boot-$l-mok/serial.log' &&
        grep -a -q 'asymmetri reprosign test mok' '$WORK/boot-$l-mok/serial.log'"
    efivars_agree "$l" "$WORK/boot-$l-mok/serial.log" "$WORK/vars-mok.fd" "$shim" "$WORK/grub.mok" "$WORK/vmlinuz.mok" \
        "$WORK/$l-vmlinuz.changed"
    modules_by_build_key "$l" "$vars" "$shim" "$grub" "$kernel" "$tree"

    # 5. The same MOK-signed GRUB without the MokList: shim refuses it.
    chain_esp "$l-mok-absent" "$shim" "$WORK/grub.mok" "$WORK/vmlinuz.mok" "$WORK/$l-initrd.gz"
    chain_boot "$l-mok-absent" "$vars"
    expect_boot "$l-mok-absent" denied "5. $l: without the MOK in MokList, shim refuses the MOK-signed GRUB" \
        --vars "$vars" "$shim" "$WORK/grub.mok" "$WORK/vmlinuz.mok"
}

# efivars_agree LABEL SERIAL-LOG STORE SHIM GRUB KERNEL CHANGED-KERNEL:
# 6. the variables the booted kernel showed in efivarfs (copied out over
# the serial console) are the store it booted with: efi list --efivars
# decodes the same PK, KEK, db and dbx as efi list --vars, MokListRT holds
# the MOK certificate and shim's vendor certificate, and chain --efivars
# judges SHIM GRUB KERNEL as chain --vars STORE does, and refuses
# CHANGED-KERNEL.
efivars_agree() {
    local l=$1 dir=$WORK/$1-efivars store=$3 shim=$4 grub=$5 kernel=$6 changed=$7 v
    python3 "$TESTS_DIR/tools/serial-efivars.py" "$2" "$dir" >/dev/null
    # The stores hold PK, KEK and db; dbx only some (efi enroll writes none
    # unless asked), and then efivarfs has none either.
    for v in PK KEK db dbx; do
        check "6. $l: efivarfs $v as the booted kernel showed it lists as the store's $v" bash -c "
            cmp <('$REPROSIGN' efi list --efivars '$dir' --name $v 2>&1 | grep '^    list ') \
                <('$REPROSIGN' efi list --vars '$store' --name $v 2>&1 | grep '^    list ') &&
            { [ $v = dbx ] || [ -n \"\$('$REPROSIGN' efi list --efivars '$dir' --name $v | grep '^    list ')\" ]; }"
    done
    check "6. $l: efivarfs MokListRT holds the MOK certificate and shim's vendor certificate" bash -c "
        '$REPROSIGN' efi list --efivars '$dir' --name MokListRT >'$dir.mokrt' &&
        grep -q 'CN=reprosign test mok' '$dir.mokrt' && grep -q 'CN=Debian Secure Boot CA' '$dir.mokrt'"
    check "6. $l: efivarfs shows Secure Boot on, out of setup mode" bash -c "
        '$REPROSIGN' efi list --efivars '$dir' | grep -q '^SecureBoot 8be4df61-93ca-11d2-aa0d-00e098032b8c BS,RT 1 bytes: 1\$' &&
        '$REPROSIGN' efi list --efivars '$dir' | grep -q '^SetupMode 8be4df61-93ca-11d2-aa0d-00e098032b8c BS,RT 1 bytes: 0\$'"
    check "6. $l: chain --efivars on the booted machine's variables judges as chain --vars" bash -c "
        '$REPROSIGN' chain --efivars '$dir' '$shim' '$grub' '$kernel' >'$dir.out' &&
        grep -q '^variables: $dir (a running machine: SecureBoot on, SetupMode off)' '$dir.out' &&
        cmp <(grep '^stage' '$dir.out' | cut -d: -f1-2) \
            <('$REPROSIGN' chain --vars '$store' '$shim' '$grub' '$kernel' | grep '^stage' | cut -d: -f1-2)"
    check "6. $l: chain --efivars refuses the changed kernel as chain --vars does" bash -c "
        ! '$REPROSIGN' chain --efivars '$dir' '$shim' '$grub' '$changed' >/dev/null 2>&1"
}

# modules_by_build_key LABEL VARS SHIM GRUB KERNEL MODULES: every module of
# the kernel, as the kernel checks it: by the build key chain reads from the
# kernel image, and by nothing without it.
modules_by_build_key() {
    local l=$1 vars=$2 shim=$3 grub=$4 kernel=$5 tree=$6 n
    n=$(find "$tree" -name '*.ko' -o -name '*.ko.xz' | wc -l)
    check "$l: chain verifies all $n modules of the kernel by the build key in its image" bash -c "
        '$REPROSIGN' chain --vars '$vars' '$shim' '$grub' '$kernel' --modules '$tree' |
            grep -q 'OK, $n verified (.builtin_trusted_keys $n,' && [ $n -gt 1000 ]"
    check "$l: ... and refuses them all when --kernel-keys names another key instead" bash -c "
        ! '$REPROSIGN' chain --vars '$vars' '$shim' '$grub' '$kernel' --modules '$tree' \
            --kernel-keys '$WORK/other.crt' >'$WORK/$l-otherkey.out' &&
        grep -q 'FAILED, 0 verified .*, $n failed' '$WORK/$l-otherkey.out'"
    check "$l: ... and when the last stage is no kernel image, saying the build key is missing" bash -c "
        ! '$REPROSIGN' chain --vars '$vars' '$shim' '$grub' --modules '$tree' >'$WORK/$l-nokey.out' &&
        grep -q 'FAILED, 0 verified .*, $n failed' '$WORK/$l-nokey.out' &&
        grep -q 'the last stage is no kernel image it can read, and no --kernel-keys gives the kernel.s build certificates' '$WORK/$l-nokey.out'"
}

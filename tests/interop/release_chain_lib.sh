# The differential test of test_boot_chain.sh on a Debian release's own
# chain for amd64, shared by test_boot_chain_trixie.sh and
# test_boot_chain_forky.sh. Source after lib.sh and tests/tools/boot-chain.sh.
#   release_chain NAME SHIM GRUB KERNEL MODULES MOK-MOD NONE-MOD OTHER-MOD DEBIAN-MOD
# OVMF's Secure Boot build with Microsoft's keys boots the release's
# shim-signed, grub-efi-amd64-signed and signed kernel into a busybox
# initramfs. For each case the boot's verdict and reprosign chain's must
# agree; for the modules (MODULES, the kernel's /usr/lib/modules; the four
# *-MOD are NAME.ko.xz files under it: the first three re-signed with a
# MOK, not at all and with a foreign key, the last as Debian built it), the
# kernel's under lockdown and chain's; for the keys built into the kernel,
# the names its log gives them and chain's.
MSVARS=/usr/share/OVMF/OVMF_VARS_4M.ms.fd

resigned_xz() {  # resigned_xz MODULE.ko.xz KEY|none OUT.ko.xz
    local b
    b=$WORK/$(basename "$1" .ko.xz)
    mkdir -p "$(dirname "$3")"
    xz -dc "$1" >"$b.ko" && "$REPROSIGN" strip "$b.ko" --output "$b.unsigned" &&
        if [ "$2" = none ]; then cp "$b.unsigned" "$b.out"
        else "$REPROSIGN" sign --key "$WORK/$2.key" --cert "$WORK/$2.crt" "$b.unsigned" --output "$b.out"; fi &&
        xz -c "$b.out" >"$3"
}

release_chain() {
    local rel=$1 shim=$2 grub=$3 kernel=$4 mods=$5 m_mok m_none m_other m_deb n
    m_mok=$(basename "$6") m_none=$(basename "$7") m_other=$(basename "$8") m_deb=$(basename "$9")
    make_key mok; make_key other
    python3 "$TESTS_DIR/tools/mkinitramfs.py" "$WORK/initrd.gz" "$(command -v busybox)"
    resigned_xz "$6" mok "$WORK/mod-mok/$m_mok"
    resigned_xz "$7" none "$WORK/mod-none/$m_none"
    resigned_xz "$8" other "$WORK/mod-other/$m_other"
    # Debian's own, signed with the key made for that build, whose
    # certificate is in the kernel image (.builtin_trusted_keys): chain
    # reads it from there.
    mkdir -p "$WORK/mod-debian" && cp "$9" "$WORK/mod-debian/"
    python3 "$TESTS_DIR/tools/mkinitramfs.py" "$WORK/initrd-mods.gz" "$(command -v busybox)" \
        "$WORK/mod-mok/$m_mok" "$WORK/mod-none/$m_none" "$WORK/mod-other/$m_other" "$WORK/mod-debian/$m_deb"

    # 1. The chain boots. 2. Its kernel has no .sbat: shim refuses it when
    # it loads it itself.
    chain_esp debian "$shim" "$grub" "$kernel" "$WORK/initrd.gz"
    chain_esp kernel-by-shim "$shim" "$kernel" "$kernel" "$WORK/initrd.gz"
    chain_boot debian "$MSVARS"; chain_boot kernel-by-shim "$MSVARS"
    expect_boot debian booted "1. $rel's chain under the Microsoft db boots to the initramfs" \
        --vars "$MSVARS" "$shim" "$grub" "$kernel"
    refuses "2. $rel's kernel has no .sbat" "" "$REPROSIGN" sbat "$kernel"
    expect_boot kernel-by-shim denied "2. the same kernel loaded by shim itself is refused (no .sbat)" \
        --vars "$MSVARS" "$shim" "$kernel"

    # 3. MOK: GRUB and the kernel re-signed with a test MOK by reprosign,
    # shim's MokList written by efi shim-var. 4. A kernel with one byte
    # changed after signing.
    mok_signed "$grub" "$kernel"
    one_byte_changed "$kernel" "$WORK/vmlinuz.changed"
    chain_esp mok "$shim" "$WORK/grub.mok" "$WORK/vmlinuz.mok" "$WORK/initrd-mods.gz"
    chain_esp changed "$shim" "$grub" "$WORK/vmlinuz.changed" "$WORK/initrd.gz"
    chain_boot mok "$WORK/vars-mok.fd"; chain_boot changed "$MSVARS"
    expect_boot mok booted "3. $rel's GRUB and kernel signed with a MOK by reprosign boot" \
        --vars "$WORK/vars-mok.fd" "$shim" "$WORK/grub.mok" "$WORK/vmlinuz.mok"
    expect_boot changed denied "4. a kernel with one byte changed is refused" \
        --vars "$MSVARS" "$shim" "$grub" "$WORK/vmlinuz.changed"
    local mokchain=(--vars "$WORK/vars-mok.fd" "$shim" "$WORK/grub.mok" "$WORK/vmlinuz.mok")
    module_agrees mok "$WORK/mod-mok" "$m_mok" loaded "3. under lockdown, a MOK-signed module.ko.xz loads" "${mokchain[@]}"
    module_agrees mok "$WORK/mod-none" "$m_none" refused "3. under lockdown, an unsigned module.ko.xz is refused" \
        "${mokchain[@]}"
    module_agrees mok "$WORK/mod-other" "$m_other" refused \
        "3. under lockdown, a module.ko.xz signed with a foreign key is refused" "${mokchain[@]}"
    module_agrees mok "$WORK/mod-debian" "$m_deb" loaded \
        "3. under lockdown, Debian's own $m_deb loads by its build key, which chain reads from the kernel image" \
        "${mokchain[@]}"
    check "3. the kernel is locked down" grep -a -q 'lockdown: none \[integrity\]' "$WORK/boot-mok/serial.log"
    builtin_keys_agree mok "3. the kernel and chain name the same built-in keys" "${mokchain[@]}"
    # Every module of the kernel, as the kernel checks it: by the build key
    # read from the kernel image, and by nothing without it.
    n=$(find "$mods" -name '*.ko.xz' | wc -l)
    check "chain verifies all $n modules of $rel's kernel (.ko.xz) by the build key in its image" bash -c "
        '$REPROSIGN' chain --vars '$MSVARS' '$shim' '$grub' '$kernel' --modules '$mods' \
            | grep -q 'OK, $n verified (.builtin_trusted_keys $n,' && [ $n -gt 900 ]"
    check "... and refuses them all when --kernel-keys names another key instead" bash -c "
        ! '$REPROSIGN' chain --vars '$MSVARS' '$shim' '$grub' '$kernel' --modules '$mods' \
            --kernel-keys '$WORK/other.crt' >'$WORK/otherkey.out' &&
        grep -q 'FAILED, 0 verified .*, $n failed' '$WORK/otherkey.out'"
    check "... and when the last stage is no kernel image, saying the build key is missing" bash -c "
        ! '$REPROSIGN' chain --vars '$MSVARS' '$shim' '$grub' --modules '$mods' >'$WORK/nokey.out' &&
        grep -q 'FAILED, 0 verified .*, $n failed' '$WORK/nokey.out' &&
        grep -q 'the last stage is no kernel image it can read, and no --kernel-keys gives the kernel.s build certificates' '$WORK/nokey.out'"
    # 5. The same MOK-signed GRUB without the MokList: shim refuses it.
    chain_esp mok-absent "$shim" "$WORK/grub.mok" "$WORK/vmlinuz.mok" "$WORK/initrd.gz"
    chain_boot mok-absent "$MSVARS"
    expect_boot mok-absent denied "5. without the MOK in MokList, shim refuses the MOK-signed GRUB" \
        --vars "$MSVARS" "$shim" "$WORK/grub.mok" "$WORK/vmlinuz.mok"
}

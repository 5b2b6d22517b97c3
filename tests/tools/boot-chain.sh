# Boots a whole Secure Boot chain in QEMU + OVMF (TCG): shim as
# \EFI\BOOT\BOOTX64.EFI, GRUB beside it, a kernel and a busybox initramfs
# (tests/tools/mkinitramfs.py) that reports over the serial console and
# powers off. Sourced by the boot matrix tests after lib.sh. CHAIN_ARCH,
# read at each call, picks the machine: x64 (the default), ia32 (OVMF's
# 32-bit build in qemu-system-i386: shim as \EFI\BOOT\BOOTIA32.EFI, GRUB
# as grubia32.efi) or aa64 (AAVMF in qemu-system-aarch64 -machine virt:
# BOOTAA64.EFI, grubaa64.efi, the console on ttyAMA0).
#
#   chain_esp NAME SHIM GRUB KERNEL INITRD   builds $WORK/boot-NAME/esp.img
#   chain_boot NAME VARS                     starts QEMU in the background
#   chain_result NAME                        waits; prints booted|denied|timeout|exited
#   module_agrees NAME DIR MODULE WANT WHAT CHAIN-ARGS...
#                                            the booted kernel's verdict on MODULE and
#                                            chain --modules DIR's must both be WANT
#   builtin_keys_agree NAME WHAT CHAIN-ARGS...
#                                            the keys the booted kernel loaded into
#                                            .builtin_trusted_keys, by the names its log
#                                            gives them, are those chain reads from its image
#
# Every boot is bounded (BOOT_TIMEOUT seconds of wall time) and its serial
# log is kept in $WORK/boot-NAME/serial.log, shown on a failure.
CHAIN_ARCH=${CHAIN_ARCH:-x64}
# bookworm_amd64_chain: SHIM, SHIM_UNSIGNED, GRUB and KERNEL, Debian's
# bookworm chain for amd64 in the fixtures (need_fixtures bootchain, shim).
bookworm_amd64_chain() {
    SHIM=$FIXTURES/root/shim-signed/usr/lib/shim/shimx64.efi.signed
    SHIM_UNSIGNED=$FIXTURES/root/shim-unsigned/usr/lib/shim/shimx64.efi
    GRUB=$FIXTURES/root/grub-efi-amd64-signed/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed
    KERNEL=$(ls "$FIXTURES"/signed-kernel/boot/vmlinuz-* | head -n 1)
}
chain_machine() {   # the QEMU command line up to its drives, for $CHAIN_ARCH
    case $CHAIN_ARCH in
    ia32) echo qemu-system-i386 -machine q35,smm=on,accel=tcg -m 768 -global driver=cfi.pflash01,property=secure,value=on \
        -drive if=pflash,format=raw,unit=0,readonly=on,file=/usr/share/OVMF/OVMF32_CODE_4M.secboot.fd ;;
    # pauth-impdef: QEMU's own pointer authentication, far faster under TCG.
    aa64) echo qemu-system-aarch64 -machine virt -cpu max,pauth-impdef=on -m 768 \
        -drive if=pflash,format=raw,unit=0,readonly=on,file=/usr/share/AAVMF/AAVMF_CODE.fd ;;
    *) echo qemu-system-x86_64 -machine q35,smm=on,accel=tcg -m 768 -global driver=cfi.pflash01,property=secure,value=on \
        -drive if=pflash,format=raw,unit=0,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.secboot.fd ;;
    esac
}
# A Debian kernel reaches the initramfs in about a minute under TCG on a
# busy 2-core machine; the bound is generous since only a hung boot waits
# it out.
BOOT_TIMEOUT=${BOOT_TIMEOUT:-420}

chain_esp() {
    local dir=$WORK/boot-$1 cfg kib
    mkdir -p "$dir"
    # The ESP holds what it carries with 16 MiB to spare: an arm64 kernel
    # is an uncompressed Image of 30 to 40 MB, and a case that loads the
    # kernel as GRUB carries it twice.
    kib=$(( ($(stat -L -c %s "$2" "$3" "$4" "$5" | paste -sd+)) / 1024 + 16384 ))
    cfg=$dir/grub.cfg
    # no_timer_check: under TCG on a loaded machine the IO-APIC timer check
    # can time out and panic the kernel before init ("IO-APIC + timer doesn't work").
    printf 'set timeout=0\nlinux /vmlinuz quiet panic=-1 %s\ninitrd /initrd.img\nboot\n' \
        "$([ "$CHAIN_ARCH" = aa64 ] && echo console=ttyAMA0 || echo console=ttyS0 no_timer_check)" >"$cfg"
    rm -f "$dir/esp.img"
    { mkfs.vfat -C "$dir/esp.img" "$kib" >/dev/null &&
        mmd -i "$dir/esp.img" ::/EFI ::/EFI/BOOT ::/EFI/debian &&
        mcopy -i "$dir/esp.img" "$2" "::/EFI/BOOT/BOOT${CHAIN_ARCH^^}.EFI" &&
        mcopy -i "$dir/esp.img" "$3" "::/EFI/BOOT/grub$CHAIN_ARCH.efi" &&
        mcopy -i "$dir/esp.img" "$cfg" ::/EFI/BOOT/grub.cfg &&
        mcopy -i "$dir/esp.img" "$cfg" ::/EFI/debian/grub.cfg &&
        mcopy -i "$dir/esp.img" "$4" ::/vmlinuz &&
        mcopy -i "$dir/esp.img" "$5" ::/initrd.img; } || fail "boot $1: cannot build its ESP ($kib KiB)"
}

chain_boot() {
    local dir=$WORK/boot-$1
    cp "$2" "$dir/vars.fd"
    : >"$dir/serial.log"
    # shellcheck disable=SC2046
    $(chain_machine) \
        -drive if=pflash,format=raw,unit=1,file="$dir/vars.fd" \
        -drive if=none,id=esp,format=raw,file="$dir/esp.img" -device virtio-blk-pci,drive=esp \
        -nodefaults -display none -serial file:"$dir/serial.log" -no-reboot &
    echo $! >"$dir/pid"
    date +%s >"$dir/start"
}

# The refusals each stage prints: shim ("Security Violation", "Access
# Denied"), GRUB through shim_lock ("bad shim signature"), firmware.
chain_result() {
    local dir=$WORK/boot-$1 pid result=timeout deadline=$((SECONDS + BOOT_TIMEOUT))
    pid=$(cat "$dir/pid")
    while [ "$SECONDS" -lt "$deadline" ]; do
        if grep -a -q "REPROSIGN-DONE" "$dir/serial.log" 2>/dev/null; then result=booted; break; fi
        if grep -q -a -e "Access Denied" -e "Security Violation" -e "bad shim signature" \
            -e "you need to load the kernel first" "$dir/serial.log" 2>/dev/null; then result=denied; break; fi
        kill -0 "$pid" 2>/dev/null || { result=exited; break; }
        sleep 0.5
    done
    echo "$result"
    echo $(($(date +%s) - $(cat "$dir/start"))) >"$dir/seconds"
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    return 0
}

# expect_boot NAME booted|denied WHAT [CHAIN-ARGS...]: the boot's verdict,
# and reprosign chain's verdict on the same inputs, must both be WANT.
expect_boot() {
    local name=$1 want=$2 what=$3 got chain=booted; shift 3
    got=$(chain_result "$name")
    if [ $# -gt 0 ] && ! "$REPROSIGN" chain "$@" >"$WORK/boot-$name/chain.out" 2>&1; then chain=denied; fi
    if [ "$got" = "$want" ] && { [ $# -eq 0 ] || [ "$chain" = "$want" ]; }; then
        pass "$what (boot: $got in $(cat "$WORK/boot-$name/seconds")s, chain: $chain)"
    else
        fail "$what: expected $want, boot $got, chain $chain"
        tail -n 25 "$WORK/boot-$name/serial.log" | tr -d '\r' | sed 's/^/    serial: /'
        sed 's/^/    chain: /' "$WORK/boot-$name/chain.out" 2>/dev/null
    fi
}

# mok_signed GRUB KERNEL: the test MOK (make_key mok) in MokList, written
# by efi shim-var into a copy of $MSVARS ($WORK/vars-mok.fd), and GRUB and
# KERNEL stripped and signed with it ($WORK/grub.mok, $WORK/vmlinuz.mok).
mok_signed() {
    "$REPROSIGN" efi siglist --cert "$WORK/mok.crt" --output "$WORK/mok.esl"
    "$REPROSIGN" efi shim-var --vars "$MSVARS" --name MokList "$WORK/mok.esl" --output "$WORK/vars-mok.fd"
    "$REPROSIGN" strip "$1" --output "$WORK/grub.unsigned"
    "$REPROSIGN" strip "$2" --output "$WORK/vmlinuz.unsigned"
    "$REPROSIGN" sign --key "$WORK/mok.key" --cert "$WORK/mok.crt" "$WORK/grub.unsigned" --output "$WORK/grub.mok"
    "$REPROSIGN" sign --key "$WORK/mok.key" --cert "$WORK/mok.crt" "$WORK/vmlinuz.unsigned" --output "$WORK/vmlinuz.mok"
}

# one_byte_changed FILE OUT: a copy of FILE with the byte at 64 KiB changed.
one_byte_changed() {
    cp "$1" "$2" && printf '\x01' | dd of="$2" bs=1 seek=65536 conv=notrunc status=none
}

# module_agrees NAME DIR MODULE loaded|refused WHAT CHAIN-ARGS...: what the
# kernel of boot NAME said about MODULE (mkinitramfs.py's lines), and what
# reprosign chain CHAIN-ARGS --modules DIR says, must both be WANT.
module_agrees() {
    local name=$1 dir=$2 module=$3 want=$4 what=$5 chain=loaded log=$WORK/boot-$1/serial.log
    shift 5
    "$REPROSIGN" chain "$@" --modules "$dir" >"$WORK/mod.out" 2>&1 || chain=refused
    # grep reads the file itself: grep -q on a pipe may stop the writer early (pipefail).
    if grep -a -q "REPROSIGN-MODULE $module: $want" "$log" && [ "$chain" = "$want" ]; then
        pass "$what (kernel and chain: $want$(tr -d '\r' <"$log" | sed -n "s/^REPROSIGN-MODULE $module: refused: \(.*\)/; kernel: \1/p" | head -n 1))"
    else fail "$what: expected $want, chain $chain"; tr -d '\r' <"$log" | grep -a "REPROSIGN-MODULE" | sed 's/^/    /'
        sed 's/^/    chain: /' "$WORK/mod.out"; fi
}

builtin_keys_agree() {
    local log=$WORK/boot-$1/serial.log what=$2
    shift 2
    # The EFI lists' keys are logged as "integrity: Loaded X.509 cert".
    tr -d '\r' <"$log" | grep -a "Loaded X.509 cert '" | grep -av 'integrity: ' |
        sed "s/.*Loaded X.509 cert '\(.*\)'\$/\1/" | sort >"$WORK/kernel-builtin"
    # An empty module directory fails the chain (no module verified), but
    # its JSON names the keys all the same.
    mkdir -p "$WORK/no-modules"
    "$REPROSIGN" chain "$@" --modules "$WORK/no-modules" --json 2>"$WORK/chain-builtin.err" |
        jq -r '.modules.builtin_keys | select(.from == "image") | .certificates[].kernel_name' | sort >"$WORK/chain-builtin"
    check "$what ($(paste -sd, "$WORK/kernel-builtin"))" \
        bash -c "[ -s '$WORK/kernel-builtin' ] && cmp -s '$WORK/kernel-builtin' '$WORK/chain-builtin'"
}

# Boots one EFI image in QEMU (TCG) from an ESP of its own, and watches
# the serial console for $MARKER (the image ran) or a refusal. Sourced by
# the firmware tests after lib.sh; set MARKER. UEFI_ARCH picks the machine:
# x64 (the default: OVMF's Secure Boot build, q35 with SMM), ia32 (the same
# for 32-bit x86, ovmf-ia32) or aa64 (AAVMF, ArmVirtQemu, which keeps
# Secure Boot's variables itself).
#
#   boot NAME IMAGE VARS [ESP-PATH=FILE...]   IMAGE as \EFI\BOOT\BOOT<ARCH>.EFI,
#                                             each FILE at ESP-PATH; QEMU
#                                             starts in the background
#   boot_result NAME                          waits; prints ran|denied|timeout|exited
#   expect NAME ran|denied WHAT               a check of boot_result's verdict
#
# The serial log is kept in $WORK/boot-NAME/serial.log.
UEFI_ARCH=${UEFI_ARCH:-x64}
if [ "$UEFI_ARCH" = aa64 ]; then
    CODE=/usr/share/AAVMF/AAVMF_CODE.fd
    uefi_machine=(qemu-system-aarch64 -machine virt -cpu max -m 768)
elif [ "$UEFI_ARCH" = ia32 ]; then
    CODE=/usr/share/OVMF/OVMF32_CODE_4M.secboot.fd
    uefi_machine=(qemu-system-i386 -machine q35,smm=on,accel=tcg -m 768 -global driver=cfi.pflash01,property=secure,value=on)
else
    CODE=/usr/share/OVMF/OVMF_CODE_4M.secboot.fd
    uefi_machine=(qemu-system-x86_64 -machine q35,smm=on,accel=tcg -m 768 -global driver=cfi.pflash01,property=secure,value=on)
fi

boot() {
    local name=$1 image=$2 vars=$3 dir=$WORK/boot-$1 spec to kib
    shift 3
    mkdir -p "$dir"
    cp "$vars" "$dir/vars.fd"
    # Room for every file, and 8 MiB for the file system.
    kib=$(( ($(cat "$image" "${@#*=}" | wc -c) / 1024) * 5 / 4 + 8192 ))
    mkfs.vfat -C "$dir/esp.img" "$kib" >/dev/null && mmd -i "$dir/esp.img" ::/EFI ::/EFI/BOOT &&
        mcopy -i "$dir/esp.img" "$image" "::/EFI/BOOT/BOOT${UEFI_ARCH^^}.EFI" || return 1
    for spec in "$@"; do
        to=${spec%%=*}
        # Each directory on the way, once (mmd refuses one that exists).
        while [ "${to%/*}" != "$to" ] && [ -n "${to%/*}" ]; do
            to=${to%/*}; echo "$to"
        done | sort -u | while read -r d; do mmd -i "$dir/esp.img" "::$d" 2>/dev/null; done
        mcopy -i "$dir/esp.img" "${spec#*=}" "::${spec%%=*}" || return 1
    done
    "${uefi_machine[@]}" \
        -drive if=pflash,format=raw,unit=0,readonly=on,file="$CODE" \
        -drive if=pflash,format=raw,unit=1,file="$dir/vars.fd" \
        -drive if=none,id=esp,format=raw,file="$dir/esp.img" -device virtio-blk-pci,drive=esp \
        -nodefaults -display none -serial file:"$dir/serial.log" -no-reboot &
    echo $! >"$dir/pid"
}

# A boot takes 5 to 15 s under TCG; the bound is generous, for a machine
# busy with other work, since only a boot that never ends waits it out.
# Refusals: the firmware's boot manager ("Access Denied", "Security
# Violation"), a boot loader's LoadImage error (systemd-boot: "Error loading
# \hello.efi: Access denied"): matched whatever their case.
boot_result() {
    local dir=$WORK/boot-$1 pid result=timeout deadline=$((SECONDS + 180))
    pid=$(cat "$dir/pid")
    while [ "$SECONDS" -lt "$deadline" ]; do
        if grep -a -q "$MARKER" "$dir/serial.log" 2>/dev/null; then result=ran; break; fi
        if grep -a -q -i "Access Denied\|Security Violation" "$dir/serial.log" 2>/dev/null; then result=denied; break; fi
        kill -0 "$pid" 2>/dev/null || { result=exited; break; }
        sleep 0.2
    done
    echo "$result"
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
}

expect() {  # expect NAME ran|denied WHAT
    local got
    got=$(boot_result "$1")
    if [ "$got" = "$2" ]; then pass "$3 ($got)"; else fail "$3: expected $2, got $got"; tail -n 5 "$WORK/boot-$1/serial.log" | sed 's/^/    /'; fi
}

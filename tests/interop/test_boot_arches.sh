#!/bin/bash
# ctest-label: slow
# Beyond amd64: trixie's boot loaders for arm64 and ia32, signed through
# their real templates, under their real firmware with Secure Boot.
# arm64 end to end: trixie's systemd-boot and GRUB for arm64, signed as
# Debian's service signs them (their real templates through sign-template
# with a test db key, the signatures attached to the real unsigned images
# with attach-tree), boot under AAVMF (ArmVirtQemu in QEMU, TCG) whose
# store 'reprosign efi enroll' wrote: the firmware starts systemd-boot,
# which starts GRUB through the firmware's LoadImage, to GRUB's prompt.
# The firmware refuses the unsigned systemd-boot, and systemd-boot the
# unsigned GRUB. ia32: OVMF's 32-bit build, its store from 'efi enroll',
# starts the ia32 GRUB signed through grub-efi-ia32-signed-template, and
# refuses the unsigned one.
. "$TESTS_DIR/lib.sh"
need_tool qemu-system-aarch64; need_tool qemu-system-i386; need_tool mkfs.vfat; need_tool mcopy; need_tool sbverify
AAVMF=/usr/share/AAVMF
[ -r "$AAVMF/AAVMF_CODE.fd" ] && [ -r "$AAVMF/AAVMF_VARS.ms.fd" ] || skip "qemu-efi-aarch64 is not installed"
[ -r /usr/share/OVMF/OVMF32_CODE_4M.secboot.fd ] || skip "ovmf-ia32 is not installed"
need_fixtures trixie
. "$TESTS_DIR/interop/templates_lib.sh"
# GRUB's banner on the serial console: it ran.
MARKER="GNU GRUB  version"
UEFI_ARCH=aa64
. "$TESTS_DIR/tools/uefi-boot.sh"
make_key PK; make_key KEK; make_key db
export SOURCE_DATE_EPOCH=1700000000

# The blank AAVMF_VARS.fd (zeros until the firmware's first boot) is
# refused with the reason; the formatted .ms store takes the test keys.
refuses "efi enroll refuses AAVMF's blank store, saying so" "blank variable store (every byte 0x00)" \
    "$REPROSIGN" efi enroll --vars "$AAVMF/AAVMF_VARS.fd" --pk "$WORK/PK.crt" --kek "$WORK/KEK.crt" \
    --db "$WORK/db.crt" --output "$WORK/blank.fd"
check "efi enroll replaces PK, KEK and db in AAVMF's 64 MiB store" "$REPROSIGN" efi enroll \
    --vars "$AAVMF/AAVMF_VARS.ms.fd" --pk "$WORK/PK.crt" --kek "$WORK/KEK.crt" --db "$WORK/db.crt" \
    --timestamp 1700000000 --output "$WORK/vars.fd"
# The store is a 64 MiB flash image whose first 768 KiB are the variables'
# firmware volume: what follows it is copied through unchanged.
fv=$(od -A n -t u8 -j 32 -N 8 "$AAVMF/AAVMF_VARS.ms.fd" | tr -d ' ')
check "... the 64 MiB past its ${fv}-byte volume copied through byte for byte" bash -c "
    [ \$(stat -c %s '$WORK/vars.fd') = \$(stat -c %s '$AAVMF/AAVMF_VARS.ms.fd') ] &&
    cmp <(tail -c +$((fv + 1)) '$WORK/vars.fd') <(tail -c +$((fv + 1)) '$AAVMF/AAVMF_VARS.ms.fd')"
head -c $((64 * 1024 * 1024 + 1)) /dev/zero >"$WORK/huge.fd"
refuses "efi list refuses a store larger than any flash image, with its size and the limit" "" \
    "$REPROSIGN" efi list --vars "$WORK/huge.fd"
check "... naming both" grep -q "huge.fd: 67108865 bytes, more than a variable store's flash image holds (at most 67108864: AAVMF's)" "$WORK/.err"
db_lists() { "$REPROSIGN" efi list --vars "$1" | awk '/^[^ ]/ {in_db = /^db /} in_db && /^ /'; }
db_lists "$WORK/vars.fd" >"$WORK/db.lists"; db_lists "$AAVMF/AAVMF_VARS.ms.fd" >"$WORK/db-ms.lists"
check "... its db holds the test key alone, where Microsoft's were" bash -c "
    [ \$(grep -c 'list ' '$WORK/db.lists') = 1 ] && grep -q 'CN=reprosign test db' '$WORK/db.lists' &&
    grep -q Microsoft '$WORK/db-ms.lists'"

# Both templates as Debian's service takes them, each image attached.
for t in systemd-boot-efi-arm64-signed-template grub-efi-arm64-signed-template; do
    template_checks "$FIXTURES/trixie/debs" arm64 "$t"
done
sd=$WORK/arm64-systemd-boot-efi-arm64-signed-template
grub=$WORK/arm64-grub-efi-arm64-signed-template
sdboot=usr/lib/systemd/boot/efi/systemd-bootaa64.efi
grubaa64=usr/lib/grub/arm64-efi/monolithic/grubaa64.efi
printf 'timeout 0\ndefault grub.conf\n' >"$WORK/loader.conf"
printf 'title GRUB\nefi /grub.efi\n' >"$WORK/grub.conf"
entry() { echo "/loader/loader.conf=$WORK/loader.conf /loader/entries/grub.conf=$WORK/grub.conf /grub.efi=$1"; }

# Two boots at a time: the machine has two cores.
# shellcheck disable=SC2046
boot signed "$sd/signed-systemd-boot-efi/$sdboot" "$WORK/vars.fd" $(entry "$grub/signed-grub-efi-arm64-unsigned/$grubaa64")
# shellcheck disable=SC2046
boot sd-unsigned "$sd/root-systemd-boot-efi/$sdboot" "$WORK/vars.fd" $(entry "$grub/signed-grub-efi-arm64-unsigned/$grubaa64")
expect signed ran "AAVMF starts the signed systemd-boot, and it starts the signed GRUB"
expect sd-unsigned denied "AAVMF refuses the unsigned systemd-boot"
check "... the firmware's boot manager refused it" grep -a -q 'BdsDxe: failed to load .*Access Denied' \
    "$WORK/boot-sd-unsigned/serial.log"
# shellcheck disable=SC2046
boot grub-unsigned "$sd/signed-systemd-boot-efi/$sdboot" "$WORK/vars.fd" $(entry "$grub/root-grub-efi-arm64-unsigned/$grubaa64")
expect grub-unsigned denied "systemd-boot refuses the unsigned GRUB"
check "... through its LoadImage" grep -a -q 'Error loading \\grub.efi: Access denied' "$WORK/boot-grub-unsigned/serial.log"

# ia32: GRUB alone, as \EFI\BOOT\BOOTIA32.EFI.
UEFI_ARCH=ia32
. "$TESTS_DIR/tools/uefi-boot.sh"
check "efi enroll: OVMF32's store with the test keys" "$REPROSIGN" efi enroll --vars /usr/share/OVMF/OVMF32_VARS_4M.fd \
    --pk "$WORK/PK.crt" --kek "$WORK/KEK.crt" --db "$WORK/db.crt" --timestamp 1700000000 --output "$WORK/vars32.fd"
template_checks "$FIXTURES/trixie/debs" i386 grub-efi-ia32-signed-template
grub32=$WORK/i386-grub-efi-ia32-signed-template
grubia32=usr/lib/grub/i386-efi/monolithic/grubia32.efi
boot ia32-signed "$grub32/signed-grub-efi-ia32-unsigned/$grubia32" "$WORK/vars32.fd"
boot ia32-unsigned "$grub32/root-grub-efi-ia32-unsigned/$grubia32" "$WORK/vars32.fd"
expect ia32-signed ran "OVMF (ia32) starts the ia32 GRUB signed through its template"
expect ia32-unsigned denied "OVMF (ia32) refuses the unsigned ia32 GRUB"
check "reprosign chain agrees on the signed one" "$REPROSIGN" chain --vars "$WORK/vars32.fd" \
    "$grub32/signed-grub-efi-ia32-unsigned/$grubia32"
refuses "... and on the unsigned one" "" "$REPROSIGN" chain --vars "$WORK/vars32.fd" \
    "$grub32/root-grub-efi-ia32-unsigned/$grubia32"
finish

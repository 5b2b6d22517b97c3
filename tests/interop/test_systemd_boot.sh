#!/bin/bash
# trixie's systemd-boot, signed as Debian's service signs it: its real
# signing template through sign-template with a test db key, the signature
# attached to the real unsigned systemd-bootx64.efi with attach-tree. OVMF
# (Secure Boot, PK/KEK/db from 'reprosign efi enroll') must start it, and
# it must start a db-signed image from a Type #1 loader entry; firmware
# refuses the unsigned systemd-boot, and systemd-boot (through the
# firmware's LoadImage) refuses an entry image unsigned or signed by
# another key.
. "$TESTS_DIR/lib.sh"
need_tool qemu-system-x86_64; need_tool mkfs.vfat; need_tool mcopy; need_tool gcc; need_tool dpkg-source; need_tool sbverify
TEMPLATE=/usr/share/OVMF/OVMF_VARS_4M.fd
[ -r /usr/share/OVMF/OVMF_CODE_4M.secboot.fd ] && [ -r "$TEMPLATE" ] && [ -r /usr/lib/elf_x86_64_efi.lds ] ||
    skip "ovmf or gnu-efi is not installed"
need_fixtures trixie
. "$TESTS_DIR/interop/templates_lib.sh"
MARKER=REPROSIGN-HELLO-RAN
. "$TESTS_DIR/tools/uefi-boot.sh"
make_key PK; make_key KEK; make_key db; make_key other
bash "$TESTS_DIR/tools/build-efi-hello.sh" "$WORK/hello.efi" "$MARKER" || { echo "FAIL: cannot build the EFI app"; exit 1; }

# As test_templates_trixie takes it: sign-template, dpkg-source -x,
# attach-tree, sbverify and reprosign verify.
template_checks "$FIXTURES/trixie/debs" amd64 systemd-boot-efi-amd64-signed-template
sd=$WORK/amd64-systemd-boot-efi-amd64-signed-template
sdboot=usr/lib/systemd/boot/efi/systemd-bootx64.efi

check "efi enroll writes a store with PK, KEK and db" "$REPROSIGN" efi enroll --vars "$TEMPLATE" \
    --pk "$WORK/PK.crt" --kek "$WORK/KEK.crt" --db "$WORK/db.crt" --timestamp 1700000000 --output "$WORK/vars.fd"
"$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK/hello.efi" --output "$WORK/hello-db.efi"
"$REPROSIGN" sign --key "$WORK/other.key" --cert "$WORK/other.crt" "$WORK/hello.efi" --output "$WORK/hello-other.efi"
# No menu: the one entry boots at once.
printf 'timeout 0\ndefault hello.conf\n' >"$WORK/loader.conf"
printf 'title hello\nefi /hello.efi\n' >"$WORK/hello.conf"
entry() { echo "/loader/loader.conf=$WORK/loader.conf /loader/entries/hello.conf=$WORK/hello.conf /hello.efi=$1"; }

# Two boots at a time: the machine has two cores.
# shellcheck disable=SC2046
boot signed "$sd/signed-systemd-boot-efi/$sdboot" "$WORK/vars.fd" $(entry "$WORK/hello-db.efi")
# shellcheck disable=SC2046
boot unsigned "$sd/root-systemd-boot-efi/$sdboot" "$WORK/vars.fd" $(entry "$WORK/hello-db.efi")
expect signed ran "OVMF starts the systemd-boot signed through its template, and it starts a db-signed entry"
expect unsigned denied "OVMF refuses the unsigned systemd-boot"
# shellcheck disable=SC2046
boot entry-unsigned "$sd/signed-systemd-boot-efi/$sdboot" "$WORK/vars.fd" $(entry "$WORK/hello.efi")
# shellcheck disable=SC2046
boot entry-other "$sd/signed-systemd-boot-efi/$sdboot" "$WORK/vars.fd" $(entry "$WORK/hello-other.efi")
expect entry-unsigned denied "systemd-boot refuses an unsigned entry image"
expect entry-other denied "systemd-boot refuses an entry image signed by a key not in db"
check "reprosign chain agrees: firmware accepts the signed systemd-boot" "$REPROSIGN" chain --vars "$WORK/vars.fd" \
    "$sd/signed-systemd-boot-efi/$sdboot"
refuses "reprosign chain agrees: firmware refuses the unsigned one" "" "$REPROSIGN" chain --vars "$WORK/vars.fd" \
    "$sd/root-systemd-boot-efi/$sdboot"
# Each refusal from the stage that should make it.
check "... the firmware's boot manager refused it" grep -a -q 'BdsDxe: failed to load .*Access Denied' \
    "$WORK/boot-unsigned/serial.log"
for n in entry-unsigned entry-other; do
    check "... $n: systemd-boot's LoadImage refused it" grep -a -q 'Error loading \\hello.efi: Access denied' \
        "$WORK/boot-$n/serial.log"
done
finish

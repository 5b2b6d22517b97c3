#!/bin/bash
# Real firmware end to end: OVMF (Secure Boot build) under QEMU boots a
# variable store made by 'reprosign efi enroll' and runs only what its db
# admits. The fixture is a tiny gnu-efi app that prints a marker on the
# serial console and powers off; a refused image leaves the firmware
# waiting at "Press any key", so each boot is watched and stopped here.
# The dbx case writes the update into the store with 'efi apply'.
. "$TESTS_DIR/lib.sh"
need_tool qemu-system-x86_64; need_tool mkfs.vfat; need_tool mcopy; need_tool gcc
TEMPLATE=/usr/share/OVMF/OVMF_VARS_4M.fd
[ -r /usr/share/OVMF/OVMF_CODE_4M.secboot.fd ] && [ -r "$TEMPLATE" ] && [ -r /usr/lib/elf_x86_64_efi.lds ] ||
    skip "ovmf or gnu-efi is not installed"
MARKER=REPROSIGN-HELLO-RAN
. "$TESTS_DIR/tools/uefi-boot.sh"
make_key PK; make_key KEK; make_key db; make_key other
bash "$TESTS_DIR/tools/build-efi-hello.sh" "$WORK/hello.efi" "$MARKER" || { echo "FAIL: cannot build the EFI app"; exit 1; }

check "efi enroll writes a store with PK, KEK and db" "$REPROSIGN" efi enroll --vars "$TEMPLATE" \
    --pk "$WORK/PK.crt" --kek "$WORK/KEK.crt" --db "$WORK/db.crt" --timestamp 1700000000 --output "$WORK/vars.fd"
"$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK/hello.efi" --output "$WORK/signed.efi"
"$REPROSIGN" sign --key "$WORK/other.key" --cert "$WORK/other.crt" "$WORK/hello.efi" --output "$WORK/other.efi"
cp "$WORK/signed.efi" "$WORK/tampered.efi"
printf '\x01' | dd of="$WORK/tampered.efi" bs=1 seek=1024 conv=notrunc status=none

# dbx: the signed image's hash appended with a KEK-signed update.
"$REPROSIGN" efi siglist --hash "$WORK/hello.efi" --output "$WORK/hash.esl"
check "efi sign-var --append signs a dbx update with the KEK" "$REPROSIGN" efi sign-var --name dbx --append \
    --key "$WORK/KEK.key" --cert "$WORK/KEK.crt" --timestamp 1700000100 "$WORK/hash.esl" --output "$WORK/dbx.auth"
check "efi apply writes the dbx update into the store" "$REPROSIGN" efi apply --vars "$WORK/vars.fd" --name dbx \
    "$WORK/dbx.auth" --output "$WORK/vars-dbx.fd"
check "reprosign verify agrees: revoked by the store's dbx" bash -c \
    "! '$REPROSIGN' verify '$WORK/signed.efi' --vars '$WORK/vars-dbx.fd' >/dev/null 2>&1"

# Two boots at a time: the machine has two cores.
boot signed "$WORK/signed.efi" "$WORK/vars.fd"; boot unsigned "$WORK/hello.efi" "$WORK/vars.fd"
expect signed ran "signed with the db key: runs"
expect unsigned denied "unsigned: refused"
boot other "$WORK/other.efi" "$WORK/vars.fd"; boot tampered "$WORK/tampered.efi" "$WORK/vars.fd"
expect other denied "signed with a key not in db: refused"
expect tampered denied "one byte changed after signing: refused"
boot dbx "$WORK/signed.efi" "$WORK/vars-dbx.fd"

# Keys from scratch: efi keygen's signed updates written into the empty
# store as a machine in setup mode would take them (db, KEK, then PK).
check "efi keygen makes PK, KEK and db with their signed updates" "$REPROSIGN" efi keygen "$WORK/keys"
check "... the keys 0600, the directory 0700" bash -c "
    [ \$(stat -c %a '$WORK/keys') = 700 ] && [ \$(stat -c %a '$WORK/keys/db.key') = 600 ] && [ \$(stat -c %a '$WORK/keys/PK.key') = 600 ]"
refuses "efi keygen never overwrites keys" "" "$REPROSIGN" efi keygen "$WORK/keys"
check "its .auth files enroll in setup mode: db, KEK, then PK" bash -c "
    '$REPROSIGN' efi apply --vars '$TEMPLATE' --name db '$WORK/keys/db.auth' --output '$WORK/kg1.fd' &&
    '$REPROSIGN' efi apply --vars '$WORK/kg1.fd' --name KEK '$WORK/keys/KEK.auth' --output '$WORK/kg2.fd' &&
    '$REPROSIGN' efi apply --vars '$WORK/kg2.fd' --name PK '$WORK/keys/PK.auth' --output '$WORK/kg.fd'" >/dev/null
check "... every list owned by the GUID it recorded" bash -c "
    [ \$('$REPROSIGN' efi list --vars '$WORK/kg.fd' | grep -c \"owner \$(cat '$WORK/keys/GUID')\") = 3 ]"
"$REPROSIGN" sign --key "$WORK/keys/db.key" --cert "$WORK/keys/db.crt" "$WORK/hello.efi" --output "$WORK/kg-signed.efi"
check "chain agrees the keygen db key's image will boot" "$REPROSIGN" chain --vars "$WORK/kg.fd" "$WORK/kg-signed.efi"
expect dbx denied "hash added to dbx with sign-var --append: refused"
boot kg "$WORK/kg-signed.efi" "$WORK/kg.fd"; boot kg-unsigned "$WORK/hello.efi" "$WORK/kg.fd"
expect kg ran "OVMF with efi keygen's keys runs an image signed with its db key"
expect kg-unsigned denied "... and refuses an unsigned one"

# The README's tour, its commands taken from the README as written (so the
# two cannot drift): efi keygen, efi enroll --microsoft, sign, chain; then
# OVMF boots what it made.
python3 - "$TESTS_DIR/../README.md" >"$WORK/tour.sh" <<'PY'
import re, sys
block = open(sys.argv[1]).read().split('## A tour', 1)[1].split('```sh', 1)[1].split('```', 1)[0]
lines = block.replace('\\\n', ' ').split('\n')
for want in (r'^reprosign efi keygen keys$', r'^reprosign efi enroll ',
             r'^reprosign sign --key keys/db.key --cert keys/db.crt grubx64.efi ',
             r'^reprosign chain --vars vars.fd grubx64.efi.signed$'):
    found = [l for l in lines if re.search(want, l)]
    if len(found) != 1:
        sys.exit('README tour: no single line matches ' + want)
    print(re.sub(r'\s+#.*$', '', found[0]))
PY
[ $? = 0 ] || echo "false  # the README's tour no longer has these commands" >>"$WORK/tour.sh"
mkdir -p "$WORK/tour" && cp "$WORK/hello.efi" "$WORK/tour/grubx64.efi"
check "the README's tour runs as written: efi keygen, efi enroll --microsoft, sign, chain" bash -c "
    cd '$WORK/tour' && reprosign() { '$REPROSIGN' \"\$@\"; } && set -e && . '$WORK/tour.sh'" >/dev/null
check "... its store holds Microsoft's KEK and UEFI CA beside the new keys" bash -c "
    '$REPROSIGN' efi list --vars '$WORK/tour/vars.fd' | grep -q 'CN=Microsoft Corporation KEK CA 2011' &&
    '$REPROSIGN' efi list --vars '$WORK/tour/vars.fd' | grep -q 'CN=Microsoft Corporation UEFI CA 2011'"
boot tour "$WORK/tour/grubx64.efi.signed" "$WORK/tour/vars.fd"
expect tour ran "... and OVMF boots the image the tour signed, with the store the tour made"
finish

#!/bin/bash
# A running machine's variables: directories of efivarfs files (NAME-GUID,
# attributes word then data) made from an OVMF store, read by efi list
# --efivars and chain --efivars, which must agree with --vars on the
# store. The same against variables a booted kernel showed is case 6 of
# test_boot_chain.sh.
. "$TESTS_DIR/lib.sh"
need_tool python3
TEMPLATE=/usr/share/OVMF/OVMF_VARS_4M.fd
[ -r "$TEMPLATE" ] || skip "ovmf is not installed"
mkpe() { python3 "$TESTS_DIR/tools/mkpe.py" "$@"; }
GLOBAL=8be4df61-93ca-11d2-aa0d-00e098032b8c
SECURITY=d719b2cb-3d3a-4596-a3bc-dad00e67656f
SHIM_LOCK=605dab50-e046-4300-abb6-3dd810dd8b23
make_key PK; make_key KEK; make_key db; make_key vendor; make_key mok; make_key other

# A synthetic shim (its .vendor_cert: u32 sizes and offsets, then the DER)
# signed by db, and a next stage signed by a MOK key.
python3 - "$WORK/vc.bin" "$WORK/vendor.der" <<'PY'
import struct, sys
cert = open(sys.argv[2], "rb").read()
open(sys.argv[1], "wb").write(struct.pack("<IIII", len(cert), 0, 16, 16 + len(cert)) + cert)
PY
mkpe "$WORK/shim.efi" --add-section .vendor_cert="$WORK/vc.bin"
printf 'sbat,1,SBAT Version,sbat,1,https://github.com/rhboot/shim/blob/main/SBAT.md\ngrub,3,Free Software Foundation,grub,2.06,https://www.gnu.org/software/grub/\n' >"$WORK/sbat.csv"
mkpe "$WORK/next.efi" --sections 2 --add-section .sbat="$WORK/sbat.csv"
mkpe "$WORK/bad.efi" --sections 1
"$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK/shim.efi" --output "$WORK/shim.signed"
"$REPROSIGN" sign --key "$WORK/mok.key" --cert "$WORK/mok.crt" "$WORK/next.efi" --output "$WORK/next.mok"
"$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK/bad.efi" --output "$WORK/bad.signed"
"$REPROSIGN" sign --key "$WORK/other.key" --cert "$WORK/other.crt" "$WORK/next.efi" --output "$WORK/next.other"
"$REPROSIGN" efi siglist --cert "$WORK/mok.crt" --output "$WORK/mok.esl"
"$REPROSIGN" efi siglist --hash "$WORK/bad.efi" --output "$WORK/dbx.esl"
"$REPROSIGN" efi enroll --vars "$TEMPLATE" --pk "$WORK/PK.crt" --kek "$WORK/KEK.crt" --db "$WORK/db.crt" \
    --dbx "$WORK/dbx.esl" --timestamp 1700000000 --output "$WORK/own.fd"
"$REPROSIGN" efi shim-var --vars "$WORK/own.fd" --name MokList "$WORK/mok.esl" --output "$WORK/store.fd"

# efivar DIR NAME-GUID ATTRS FILE|-: the attributes word, then the data.
efivar() {
    mkdir -p "$1"
    { printf "\\x$3\\x00\\x00\\x00"; cat "$4"; } >"$1/$2"
}
machine() {  # machine DIR: the store as the running machine shows it
    for v in PK KEK; do "$REPROSIGN" efi db --vars "$WORK/store.fd" --name $v --output "$WORK/$v.esl"; done
    for v in db dbx; do "$REPROSIGN" efi db --vars "$WORK/store.fd" --name $v --output "$WORK/$v.var.esl"; done
    efivar "$1" PK-$GLOBAL 27 "$WORK/PK.esl"; efivar "$1" KEK-$GLOBAL 27 "$WORK/KEK.esl"
    efivar "$1" db-$SECURITY 27 "$WORK/db.var.esl"; efivar "$1" dbx-$SECURITY 27 "$WORK/dbx.var.esl"
    printf '\001' >"$WORK/one"; printf '\000' >"$WORK/zero"
    efivar "$1" SecureBoot-$GLOBAL 06 "$WORK/one"; efivar "$1" SetupMode-$GLOBAL 06 "$WORK/zero"
}
M=$WORK/machine
machine "$M"
efivar "$M" MokListRT-$SHIM_LOCK 06 "$WORK/mok.esl"

for v in PK KEK db dbx; do
    check "efi list --efivars lists $v as efi list --vars does on the store" bash -c "
        '$REPROSIGN' efi list --efivars '$M' --name $v | grep '^    list ' >'$WORK/a' &&
        '$REPROSIGN' efi list --vars '$WORK/store.fd' --name $v | grep '^    list ' >'$WORK/b' &&
        [ -s '$WORK/a' ] && cmp '$WORK/a' '$WORK/b'"
done
check "efi list --efivars decodes MokListRT and shows one-byte values" bash -c "
    '$REPROSIGN' efi list --efivars '$M' >'$WORK/list.txt' &&
    grep -q 'CN=reprosign test mok' '$WORK/list.txt' &&
    grep -q '^SecureBoot $GLOBAL BS,RT 1 bytes: 1\$' '$WORK/list.txt' && grep -q '^SetupMode $GLOBAL BS,RT 1 bytes: 0\$' '$WORK/list.txt'"
check "efi list --efivars --json has values and no timestamps" bash -c "
    '$REPROSIGN' efi list --efivars '$M' --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
v = {x[\"name\"]: x for x in d[\"variables\"]}
assert v[\"SecureBoot\"][\"value\"] == 1 and \"timestamp\" not in v[\"db\"], d'"

check "chain --efivars: shim in db, next stage signed by a key in MokListRT" bash -c "
    '$REPROSIGN' chain --efivars '$M' '$WORK/shim.signed' '$WORK/next.mok' >'$WORK/c1' &&
    '$REPROSIGN' chain --vars '$WORK/store.fd' '$WORK/shim.signed' '$WORK/next.mok' >'$WORK/c2' &&
    grep -q '^variables: $M (a running machine: SecureBoot on, SetupMode off)\$' '$WORK/c1' &&
    cmp <(grep '^stage' '$WORK/c1') <(grep '^stage' '$WORK/c2')"
refuses "chain --efivars: next stage signed by a key nowhere" "" "$REPROSIGN" chain --efivars "$M" \
    "$WORK/shim.signed" "$WORK/next.other"
check "chain --efivars: a db-signed image passes" "$REPROSIGN" chain --efivars "$M" "$WORK/shim.signed"
refuses "chain --efivars: a db-signed image whose hash is in dbx" "" "$REPROSIGN" chain --efivars "$M" "$WORK/bad.signed"
check "chain --efivars --json names the machine and its Secure Boot state" bash -c "
    '$REPROSIGN' chain --json --efivars '$M' '$WORK/shim.signed' '$WORK/next.mok' | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d[\"valid\"] and d[\"machine\"] == {\"efivars\": \"$M\", \"secure_boot\": True, \"setup_mode\": False}, d'"

check "verify --efivars: a db-signed image is admitted" "$REPROSIGN" verify "$WORK/shim.signed" --efivars "$M"
refuses "verify --efivars: its hash in the machine's dbx rejects it" "" "$REPROSIGN" verify "$WORK/bad.signed" --efivars "$M"

# A MokListRT too large for one variable is mirrored in pieces, cut
# anywhere: MokListRT, MokListRT1, ...
P=$WORK/pieces
machine "$P"
head -c 100 "$WORK/mok.esl" >"$WORK/mok.1"; tail -c +101 "$WORK/mok.esl" >"$WORK/mok.2"
efivar "$P" MokListRT-$SHIM_LOCK 06 "$WORK/mok.1"; efivar "$P" MokListRT1-$SHIM_LOCK 06 "$WORK/mok.2"
check "chain --efivars joins MokListRT, MokListRT1" "$REPROSIGN" chain --efivars "$P" "$WORK/shim.signed" "$WORK/next.mok"

# Only the runtime mirror counts: a machine shows no MokList (it is
# boot-service only); one in the directory is not read as the MOK list.
N=$WORK/nv-only
machine "$N"
efivar "$N" MokList-$SHIM_LOCK 07 "$WORK/mok.esl"
check "chain --efivars: MokList without MokListRT trusts nothing" bash -c "
    ! '$REPROSIGN' chain --efivars '$N' '$WORK/shim.signed' '$WORK/next.mok' >'$WORK/nv.out' 2>&1 &&
    grep -q '^stage 2 .*REFUSED.*chains to no certificate' '$WORK/nv.out' || { cat '$WORK/nv.out'; false; }"

# Hostile or wrong directories: one line naming the file and the reason.
bad() {  # bad WHAT FILE-NAME CONTENT-COMMAND
    rm -rf "$WORK/bad"; machine "$WORK/bad"
    bash -c "$3" >"$WORK/bad/$2"
    refuses "efivarfs: $1" "" "$REPROSIGN" efi list --efivars "$WORK/bad"
    check "efivarfs: $1: the error names the file" grep -q "$WORK/bad/$2" "$WORK/.err"
}
bad "a file not named NAME-GUID" README "echo hello"
bad "a GUID that is not one" "db-d719b2cb-3d3a-4596-a3bc-dad00e67656g" "printf '\\x27\\0\\0\\0'"
bad "a file shorter than the attributes word" "db2-$SECURITY" "printf '\\x27\\0'"
bad "a variable over the 1 MiB limit" "big-$GLOBAL" "head -c 1048581 /dev/zero"
check "efivarfs: the size limit is named" grep -q "limit" "$WORK/.err"
rm -rf "$WORK/bad"; machine "$WORK/bad"; head -c 50 "$WORK/db.var.esl" | { printf '\x27\0\0\0'; cat; } >"$WORK/bad/db-$SECURITY"
refuses "efivarfs: a db whose signature list is cut short" "" "$REPROSIGN" chain --efivars "$WORK/bad" "$WORK/shim.signed"
mkdir -p "$WORK/empty"
refuses "efivarfs: an empty directory (efivarfs not mounted)" "" "$REPROSIGN" efi list --efivars "$WORK/empty"
refuses "efivarfs: a directory that does not exist" "" "$REPROSIGN" chain --efivars "$WORK/nowhere" "$WORK/shim.signed"
check "efi list: --all is refused with --efivars (no deleted copies)" bash -c "
    '$REPROSIGN' efi list --efivars '$M' --all >/dev/null 2>&1; [ \$? = 2 ]"
# Setup mode: what to do next is said, for a store file and for a machine.
check "setup mode: efi list on OVMF's empty store says to make keys and enroll them" bash -c "
    '$REPROSIGN' efi list --vars '$TEMPLATE' >'$WORK/setup.txt' && grep -q '^No PK: ' '$WORK/setup.txt' &&
    grep -q 'reprosign efi keygen DIR' '$WORK/setup.txt' && grep -q 'reprosign efi enroll --vars FILE' '$WORK/setup.txt'"
refuses "setup mode: chain on a store with no keys" "" "$REPROSIGN" chain --vars "$TEMPLATE" "$WORK/shim.signed"
check "... says no keys are enrolled and how to enroll them" grep -q "no keys are enrolled.*efi enroll.*PK.auth" "$WORK/.err"
S=$WORK/setup; mkdir -p "$S"
efivar "$S" db-$SECURITY 27 "$WORK/db.var.esl"; efivar "$S" SetupMode-$GLOBAL 06 "$WORK/one"
efivar "$S" SecureBoot-$GLOBAL 06 "$WORK/zero"
check "setup mode on a machine (db written, no PK yet): chain says what to do next" bash -c "
    '$REPROSIGN' chain --efivars '$S' '$WORK/shim.signed' >'$WORK/setup2.txt';
    grep -q 'SetupMode on' '$WORK/setup2.txt' && grep -q '^SetupMode is on: ' '$WORK/setup2.txt' &&
    grep -q 'DIR/KEK.auth and' '$WORK/setup2.txt' && grep -q 'writing PK ends setup mode' '$WORK/setup2.txt'"
check "... and so does efi list" bash -c "
    '$REPROSIGN' efi list --efivars '$S' | grep -q '^SetupMode is on: '"
check "... but not on a machine in user mode" bash -c "
    ! '$REPROSIGN' efi list --efivars '$M' | grep -q 'SetupMode is on'"
if [ ! -e /sys/firmware/efi ]; then
    check "without UEFI, efi list and chain with no store are usage errors" bash -c "
        '$REPROSIGN' efi list >/dev/null 2>&1; [ \$? = 2 ] &&
        { '$REPROSIGN' chain '$WORK/shim.signed' >/dev/null 2>&1; [ \$? = 2 ]; }"
fi
finish

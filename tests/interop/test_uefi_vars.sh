#!/bin/bash
# Signature lists and authenticated variable updates against efitools (byte
# for byte), OVMF variable stores (Debian's, and ours), firmware's db/dbx
# rules in 'verify', and malformed input.
. "$TESTS_DIR/lib.sh"
need_tool cert-to-efi-sig-list; need_tool sign-efi-sig-list; need_tool python3
mkpe() { python3 "$TESTS_DIR/tools/mkpe.py" "$@"; }
OWNER=6fd1f5ec-1f25-4a6c-9d4c-2b29f0c7a1d3
SHIM_LOCK=605dab50-e046-4300-abb6-3dd810dd8b23    # hash-to-efi-sig-list's fixed owner
TS="2024-01-02 03:04:05"
make_key PK; make_key KEK; make_key db; make_key other

# ---- signature lists ----
cert-to-efi-sig-list -g $OWNER "$WORK/db.crt" "$WORK/db.efitools.esl" >/dev/null
check "siglist --cert equals cert-to-efi-sig-list -g" bash -c "
    '$REPROSIGN' efi siglist --cert '$WORK/db.crt' --owner $OWNER --output '$WORK/db.esl' &&
    cmp '$WORK/db.esl' '$WORK/db.efitools.esl'"
cert-to-efi-sig-list "$WORK/db.crt" "$WORK/db0.efitools.esl" >/dev/null
check "siglist --cert without --owner equals cert-to-efi-sig-list" bash -c "
    '$REPROSIGN' efi siglist --cert '$WORK/db.der' --output '$WORK/db0.esl' && cmp '$WORK/db0.esl' '$WORK/db0.efitools.esl'"
mkpe "$WORK/a.efi"; mkpe "$WORK/b.efi" --sections 2 --trailing 100
hash-to-efi-sig-list "$WORK/a.efi" "$WORK/b.efi" "$WORK/hash.efitools.esl" >/dev/null
check "siglist --hash equals hash-to-efi-sig-list (two images, one list)" bash -c "
    '$REPROSIGN' efi siglist --hash '$WORK/a.efi' --hash '$WORK/b.efi' --owner $SHIM_LOCK --output '$WORK/hash.esl' &&
    cmp '$WORK/hash.esl' '$WORK/hash.efitools.esl'"
check "efi list shows an ESL's certificate" bash -c "'$REPROSIGN' efi list '$WORK/db.esl' | grep -q 'CN=reprosign test db'"
check "efi list --json shows both hashes" bash -c "
    [ \$('$REPROSIGN' efi list --json '$WORK/hash.esl' | grep -c '\"hash\"') -eq 2 ]"

# ---- authenticated updates ----
"$REPROSIGN" efi siglist --cert "$WORK/PK.crt" --owner $OWNER --output "$WORK/PK.esl"
"$REPROSIGN" efi siglist --cert "$WORK/KEK.crt" --owner $OWNER --output "$WORK/KEK.esl"
for v in "PK PK" "KEK PK" "db KEK" "dbx KEK"; do
    set -- $v; var=$1 by=$2; esl=$WORK/db.esl
    [ "$var" = PK ] && esl=$WORK/PK.esl; [ "$var" = KEK ] && esl=$WORK/KEK.esl; [ "$var" = dbx ] && esl=$WORK/hash.esl
    for mode in replace append; do
        a=; [ $mode = append ] && a=-a
        sign-efi-sig-list $a -t "$TS" -k "$WORK/$by.key" -c "$WORK/$by.crt" $var "$esl" "$WORK/$var.$mode.efitools.auth" >/dev/null
        flag=; [ $mode = append ] && flag=--append
        check "sign-var $var ($mode) equals sign-efi-sig-list byte for byte" bash -c "
            '$REPROSIGN' efi sign-var --name $var $flag --key '$WORK/$by.key' --cert '$WORK/$by.crt' --timestamp '$TS' \
                '$esl' --output '$WORK/$var.$mode.auth' && cmp '$WORK/$var.$mode.auth' '$WORK/$var.$mode.efitools.auth'"
    done
done
check "efi list shows an update's timestamp and signer" bash -c "
    '$REPROSIGN' efi list '$WORK/db.replace.auth' | grep -q 'timestamp: 2024-01-02T03:04:05Z' &&
    '$REPROSIGN' efi list '$WORK/db.replace.auth' | grep -q 'signed by: CN=reprosign test KEK'"

# ---- variable stores ----
MS=/usr/share/OVMF/OVMF_VARS_4M.ms.fd TEMPLATE=/usr/share/OVMF/OVMF_VARS_4M.fd
[ -r "$MS" ] && [ -r "$TEMPLATE" ] || leave_out "no OVMF variable stores (Debian's ovmf): the cases on them"
if [ -r "$MS" ]; then
    "$REPROSIGN" efi list --vars "$MS" >"$WORK/ms.txt" 2>&1
    check "Debian's OVMF_VARS_4M.ms.fd: db has the Microsoft UEFI CA" grep -q "CN=Microsoft Corporation UEFI CA 2011" "$WORK/ms.txt"
    check "Debian's OVMF_VARS_4M.ms.fd: db has the Windows PCA" grep -q "CN=Microsoft Windows Production PCA 2011" "$WORK/ms.txt"
    check "Debian's OVMF_VARS_4M.ms.fd: PK and KEK hold Debian's key" grep -q "CN=Debian UEFI Secure Boot (PK/KEK key)" "$WORK/ms.txt"
    check "Debian's OVMF_VARS_4M.ms.fd: KEK has the Microsoft KEK CA" grep -q "CN=Microsoft Corporation KEK CA 2011" "$WORK/ms.txt"
    check "efi db extracts the store's db as an ESL" bash -c "
        '$REPROSIGN' efi db --vars '$MS' --output '$WORK/ms-db.esl' && '$REPROSIGN' efi list '$WORK/ms-db.esl' | grep -q 'UEFI CA 2011'"
fi
if [ -r "$TEMPLATE" ]; then
    check "enroll: PK, KEK, db and dbx into the empty store" "$REPROSIGN" efi enroll --vars "$TEMPLATE" --pk "$WORK/PK.crt" \
        --kek "$WORK/KEK.crt" --db "$WORK/db.crt" --db "$WORK/other.crt" --dbx "$WORK/hash.esl" --owner $OWNER \
        --timestamp 1700000000 --output "$WORK/vars.fd"
    check "enroll: the store's db is the lists of both certificates" bash -c "
        '$REPROSIGN' efi db --vars '$WORK/vars.fd' --output '$WORK/vars-db.esl' &&
        '$REPROSIGN' efi siglist --cert '$WORK/db.crt' --cert '$WORK/other.crt' --owner $OWNER --output '$WORK/two.esl' &&
        cmp '$WORK/vars-db.esl' '$WORK/two.esl'"
    check "enroll is reproducible" bash -c "
        '$REPROSIGN' efi enroll --vars '$TEMPLATE' --pk '$WORK/PK.crt' --kek '$WORK/KEK.crt' --db '$WORK/db.crt' \
            --db '$WORK/other.crt' --dbx '$WORK/hash.esl' --owner $OWNER --timestamp 1700000000 --output '$WORK/vars2.fd' &&
        cmp '$WORK/vars.fd' '$WORK/vars2.fd'"
    check "apply: sign-efi-sig-list's KEK-signed db append is accepted" "$REPROSIGN" efi apply --vars "$WORK/vars.fd" \
        --name db "$WORK/db.append.efitools.auth" --output "$WORK/vars-app.fd"
    check "apply: an append of entries already present changes nothing in db" bash -c "
        '$REPROSIGN' efi db --vars '$WORK/vars-app.fd' --output '$WORK/app-db.esl' && cmp '$WORK/app-db.esl' '$WORK/two.esl'"
    if command -v sbvarsign >/dev/null; then
        sbvarsign --key "$WORK/KEK.key" --cert "$WORK/KEK.crt" --attr \
            NON_VOLATILE,BOOTSERVICE_ACCESS,RUNTIME_ACCESS,TIME_BASED_AUTHENTICATED_WRITE_ACCESS,APPEND_WRITE \
            db "$WORK/hash.esl" --output "$WORK/sbvarsign.auth" >/dev/null 2>&1
        check "apply: sbvarsign's append (signed attributes, ContentInfo-less) is accepted and parsed" bash -c "
            '$REPROSIGN' efi apply --vars '$WORK/vars.fd' --name db '$WORK/sbvarsign.auth' --output '$WORK/vars-sbv.fd' &&
            '$REPROSIGN' efi list --vars '$WORK/vars-sbv.fd' --name db | grep -c EFI_CERT_SHA256 | grep -qx 2"
    fi
    "$REPROSIGN" efi sign-var --name db --key "$WORK/db.key" --cert "$WORK/db.crt" --timestamp 1800000000 \
        "$WORK/db.esl" --output "$WORK/db-by-db.auth"
    refuses "apply: db update signed by db (not a KEK) is refused" "$WORK/bad.fd" "$REPROSIGN" efi apply \
        --vars "$WORK/vars.fd" --name db "$WORK/db-by-db.auth" --output "$WORK/bad.fd"
    refuses "apply: an update signed for another variable is refused" "$WORK/bad.fd" "$REPROSIGN" efi apply \
        --vars "$WORK/vars.fd" --name db "$WORK/dbx.replace.auth" --output "$WORK/bad.fd"
    "$REPROSIGN" efi sign-var --name KEK --key "$WORK/PK.key" --cert "$WORK/PK.crt" --timestamp 1600000000 \
        "$WORK/KEK.esl" --output "$WORK/old.auth"
    refuses "apply: a replacement older than the stored variable is refused" "$WORK/bad.fd" "$REPROSIGN" efi apply \
        --vars "$WORK/vars.fd" --name KEK "$WORK/old.auth" --output "$WORK/bad.fd"
    # The same timestamp again is a replay: firmware wants a later one.
    "$REPROSIGN" efi sign-var --name KEK --key "$WORK/PK.key" --cert "$WORK/PK.crt" --timestamp 1700000000 \
        "$WORK/KEK.esl" --output "$WORK/same.auth"
    refuses "apply: a replacement with the stored variable's own timestamp is refused" "$WORK/bad.fd" \
        "$REPROSIGN" efi apply --vars "$WORK/vars.fd" --name KEK "$WORK/same.auth" --output "$WORK/bad.fd"
    check "... naming the timestamp" grep -q "timestamp is not later than the stored one" "$WORK/.err"
    "$REPROSIGN" efi sign-var --name KEK --key "$WORK/KEK.key" --cert "$WORK/KEK.crt" --timestamp 1800000000 \
        "$WORK/KEK.esl" --output "$WORK/kek-by-kek.auth"
    refuses "apply: a KEK update signed by the KEK (not PK) is refused" "$WORK/bad.fd" "$REPROSIGN" efi apply \
        --vars "$WORK/vars.fd" --name KEK "$WORK/kek-by-kek.auth" --output "$WORK/bad.fd"
    refuses "shim-var: a file that is not there is refused" "$WORK/bad.fd" "$REPROSIGN" efi shim-var \
        --vars "$WORK/vars.fd" --name MokList "$WORK/missing.esl" --output "$WORK/bad.fd"
    check "... naming it" grep -qF "reprosign: $WORK/missing.esl: cannot open" "$WORK/.err"
fi

# ---- firmware's db/dbx rules in verify ----
"$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK/a.efi" --output "$WORK/a.signed"
"$REPROSIGN" sign --key "$WORK/other.key" --cert "$WORK/other.crt" "$WORK/a.efi" --output "$WORK/a.other"
"$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK/a.other" --output "$WORK/a.both"
"$REPROSIGN" efi siglist --cert "$WORK/db.crt" --output "$WORK/db-only.esl"
"$REPROSIGN" efi siglist --cert "$WORK/other.crt" --output "$WORK/other.esl"
"$REPROSIGN" efi siglist --hash "$WORK/a.efi" --output "$WORK/a-hash.esl"
check "verify --db: a signature chaining to a db certificate is accepted" "$REPROSIGN" verify "$WORK/a.signed" --db "$WORK/db-only.esl"
refuses "verify --db: a signer not in db is rejected" "" "$REPROSIGN" verify "$WORK/a.other" --db "$WORK/db-only.esl"
check "verify --db: an unsigned image whose hash is in db is accepted" "$REPROSIGN" verify "$WORK/a.efi" --db "$WORK/a-hash.esl"
check "verify --db: a signed image whose hash is in db is accepted whatever its signer" \
    "$REPROSIGN" verify "$WORK/a.other" --db "$WORK/a-hash.esl"
refuses "verify --db: an unsigned image not in db is rejected" "" "$REPROSIGN" verify "$WORK/a.efi" --db "$WORK/db-only.esl"
# EDK2 looks an unsigned image's hash up in dbx before db: both listing it
# is a revocation.
refuses "verify --dbx: an unsigned image whose hash is in db and in dbx is rejected" "" \
    "$REPROSIGN" verify "$WORK/a.efi" --db "$WORK/a-hash.esl" --dbx "$WORK/a-hash.esl"
check "... naming dbx" grep -q "not signed, and its hash .* is in dbx" "$WORK/.err"
refuses "verify --dbx: the image hash in dbx rejects a good signature" "" \
    "$REPROSIGN" verify "$WORK/a.signed" --db "$WORK/db-only.esl" --dbx "$WORK/a-hash.esl"
refuses "verify --dbx: the signing certificate in dbx rejects" "" \
    "$REPROSIGN" verify "$WORK/a.signed" --db "$WORK/db-only.esl" --dbx "$WORK/db-only.esl"
refuses "verify --dbx: one revoked signature rejects the image even beside a good one" "" \
    "$REPROSIGN" verify "$WORK/a.both" --db "$WORK/db-only.esl" --dbx "$WORK/other.esl"
check "verify --dbx: the good signature alone is enough when the other signer is merely unknown" \
    "$REPROSIGN" verify "$WORK/a.both" --db "$WORK/db-only.esl"
# A CA in dbx revokes what it issued, though the signature does not carry it.
openssl req -new -newkey rsa:2048 -nodes -subj "/CN=reprosign test leaf" -keyout "$WORK/leaf.key" -out "$WORK/leaf.csr" 2>/dev/null
openssl x509 -req -in "$WORK/leaf.csr" -CA "$WORK/db.crt" -CAkey "$WORK/db.key" -CAcreateserial -days 30 \
    -out "$WORK/leaf.crt" 2>/dev/null
"$REPROSIGN" sign --key "$WORK/leaf.key" --cert "$WORK/leaf.crt" "$WORK/a.efi" --output "$WORK/a.leaf"
check "verify --db: a leaf issued by a db CA is accepted" "$REPROSIGN" verify "$WORK/a.leaf" --db "$WORK/db-only.esl"
refuses "verify --dbx: its issuing CA in dbx rejects it" "" \
    "$REPROSIGN" verify "$WORK/a.leaf" --db "$WORK/db-only.esl" --dbx "$WORK/db-only.esl"
check "verify --json explains a dbx rejection" bash -c "
    '$REPROSIGN' verify --json '$WORK/a.signed' --db '$WORK/db-only.esl' --dbx '$WORK/a-hash.esl' | grep -q 'rejected by dbx'"
mkpe "$WORK/c.efi" --sections 4
"$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK/c.efi" --output "$WORK/c.signed"
[ -r "$TEMPLATE" ] && check "verify --vars uses the store's db and dbx (a's hash is in its dbx)" bash -c "
    '$REPROSIGN' verify '$WORK/c.signed' --vars '$WORK/vars.fd' >/dev/null &&
    ! '$REPROSIGN' verify '$WORK/a.signed' --vars '$WORK/vars.fd' >/dev/null 2>&1"
check "verify --cert still behaves as before" "$REPROSIGN" verify "$WORK/a.signed" --cert "$WORK/db.crt"

# ---- malformed input ----
py() { python3 -c "$1"; }
head -c 20 "$WORK/db.esl" >"$WORK/trunc.esl"
refuses "truncated ESL" "$WORK/out.auth" "$REPROSIGN" efi sign-var --name db --key "$WORK/KEK.key" --cert "$WORK/KEK.crt" \
    "$WORK/trunc.esl" --output "$WORK/out.auth"
py "import struct,sys; d=bytearray(open('$WORK/db.esl','rb').read()); struct.pack_into('<I',d,16,len(d)+100); open('$WORK/lie.esl','wb').write(d)"
refuses "ESL whose list size lies" "" "$REPROSIGN" efi list "$WORK/lie.esl"
py "import struct; d=bytearray(open('$WORK/hash.esl','rb').read()); struct.pack_into('<I',d,24,40); open('$WORK/size.esl','wb').write(d)"
refuses "SHA-256 list with the wrong entry size" "" "$REPROSIGN" verify "$WORK/a.efi" --db "$WORK/size.esl"
py "import struct; d=bytearray(open('$WORK/db.esl','rb').read()); struct.pack_into('<I',d,24,0); open('$WORK/zero.esl','wb').write(d)"
if [ -r "$TEMPLATE" ]; then
    for i in $(seq 400); do cat "$WORK/db.crt"; done >"$WORK/many.crt"
    refuses "enroll: a db larger than the store is refused" "$WORK/out.fd" "$REPROSIGN" efi enroll --vars "$TEMPLATE" \
        --pk "$WORK/PK.crt" --kek "$WORK/KEK.crt" --db "$WORK/many.crt" --output "$WORK/out.fd"
    check "... naming the store" grep -qF "reprosign: $TEMPLATE: variable store is full: db needs" "$WORK/.err"
    refuses "enroll: a certificate that is not there is refused" "$WORK/out.fd" "$REPROSIGN" efi enroll --vars "$TEMPLATE" \
        --pk "$WORK/missing.crt" --kek "$WORK/KEK.crt" --db "$WORK/db.crt" --output "$WORK/out.fd"
    check "... naming it, not the store" grep -qxF "reprosign: $WORK/missing.crt: cannot open: No such file or directory" \
        "$WORK/.err"
    refuses "ESL with a zero signature size" "$WORK/out.fd" "$REPROSIGN" efi enroll --vars "${TEMPLATE}" --pk "$WORK/PK.crt" \
        --kek "$WORK/KEK.crt" --db "$WORK/db.crt" --dbx "$WORK/zero.esl" --output "$WORK/out.fd"
    check "... naming the list" grep -qxF "reprosign: $WORK/zero.esl: signature list 0: invalid signature size 0" "$WORK/.err"
    py "import struct; d=bytearray(open('$WORK/db.replace.auth','rb').read()); struct.pack_into('<I',d,16,len(d)); open('$WORK/len.auth','wb').write(d)"
    refuses "auth variable whose WIN_CERTIFICATE length runs past the end" "$WORK/out.fd" "$REPROSIGN" efi apply \
        --vars "$WORK/vars.fd" --name db "$WORK/len.auth" --output "$WORK/out.fd"
    size=$(stat -c %s "$WORK/len.auth")
    check "... naming it and the bytes there are" grep -qxF \
        "reprosign: $WORK/len.auth: WIN_CERTIFICATE length $size does not fit in the $((size - 16)) bytes after the timestamp" "$WORK/.err"
    py "import struct; d=bytearray(open('$WORK/db.replace.auth','rb').read()); struct.pack_into('<I',d,16,10); open('$WORK/short.auth','wb').write(d)"
    refuses "auth variable with a too-short WIN_CERTIFICATE" "$WORK/out.fd" "$REPROSIGN" efi apply \
        --vars "$WORK/vars.fd" --name db "$WORK/short.auth" --output "$WORK/out.fd"
    check "... saying it is too short for its own header" grep -qxF \
        "reprosign: $WORK/short.auth: WIN_CERTIFICATE length 10 leaves no room for a signature after its 24-byte header" "$WORK/.err"
    py "d=bytearray(open('$TEMPLATE','rb').read()); d[0x48]^=1; open('$WORK/guid.fd','wb').write(d)"
    refuses "variable store with the wrong GUID" "$WORK/out.fd" "$REPROSIGN" efi enroll --vars "$WORK/guid.fd" \
        --pk "$WORK/PK.crt" --kek "$WORK/KEK.crt" --db "$WORK/db.crt" --output "$WORK/out.fd"
    py "import struct; d=bytearray(open('$TEMPLATE','rb').read()); struct.pack_into('<I',d,0x58,0x7fffffff); open('$WORK/size.fd','wb').write(d)"
    refuses "variable store whose size exceeds the volume" "" "$REPROSIGN" efi list --vars "$WORK/size.fd"
    py "import struct; d=bytearray(open('$TEMPLATE','rb').read()); struct.pack_into('<Q',d,32,1<<40); open('$WORK/fv.fd','wb').write(d)"
    refuses "firmware volume longer than the file" "" "$REPROSIGN" verify "$WORK/a.signed" --vars "$WORK/fv.fd"
    py "import struct; d=bytearray(open('$WORK/vars.fd','rb').read()); struct.pack_into('<I',d,0x64+40,0x7ffffff0); open('$WORK/var.fd','wb').write(d)"
    refuses "variable whose data size runs past the store" "" "$REPROSIGN" efi list --vars "$WORK/var.fd"
    head -c 100 "$TEMPLATE" >"$WORK/tiny.fd"
    refuses "truncated variable store" "" "$REPROSIGN" efi db --vars "$WORK/tiny.fd" --output "$WORK/x.esl"
fi
finish

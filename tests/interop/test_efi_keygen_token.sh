#!/bin/bash
# efi keygen --token: PK, KEK and db generated on a PKCS#11 token
# (SoftHSM2), their certificates signed on the token and stored beside the
# keys; the signed updates enroll in an OVMF store, an image signed with
# the token's db key verifies with sbverify against the written db.crt,
# and nothing is left on the token or on disk when keygen fails.
. "$TESTS_DIR/lib.sh"
MODULE=/usr/lib/softhsm/libsofthsm2.so
need_tool softhsm2-util; need_tool pkcs11-tool; need_tool sbverify; need_tool python3
[ -e "$MODULE" ] || skip "$MODULE is not installed"
TEMPLATE=/usr/share/OVMF/OVMF_VARS_4M.fd
[ -r "$TEMPLATE" ] || skip "ovmf is not installed"
unset REPROSIGN_PKCS11_PIN
mkdir -p "$WORK/tokens"
printf 'directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n' "$WORK/tokens" >"$WORK/softhsm2.conf"
export SOFTHSM2_CONF=$WORK/softhsm2.conf
for t in main big partial; do
    softhsm2-util --init-token --free --label $t --pin 1234 --so-pin 5678 >/dev/null || skip "cannot create a SoftHSM2 token"
done
MP="module-path=$MODULE"
TOKEN="pkcs11:token=main?$MP&pin-value=1234"
objects() {  # objects TOKEN-LABEL: one line per object as pkcs11-tool lists them
    pkcs11-tool --module "$MODULE" --token-label "$1" --login --pin 1234 --list-objects 2>/dev/null
}
mkpe() { python3 "$TESTS_DIR/tools/mkpe.py" "$@"; }

check "efi keygen --token makes the keys on the token" "$REPROSIGN" efi keygen "$WORK/keys" --token "$TOKEN"
check "... DIR has the certificates, lists, updates and GUID but no key files" bash -c "
    cd '$WORK/keys' && ls PK.crt PK.cer PK.esl PK.auth KEK.crt KEK.auth db.crt db.cer db.esl db.auth GUID >/dev/null &&
    ! ls *.key 2>/dev/null"
objects main >"$WORK/objects.txt"
for v in PK KEK db; do
    check "... the token has $v's private key, public key and certificate, one CKA_ID" python3 - "$WORK/objects.txt" "$v" <<'PY'
import re, sys
blocks = re.split(r"\n(?=\S)", open(sys.argv[1]).read())
mine = [b for b in blocks if re.search(r'label:\s+%s$' % re.escape(sys.argv[2]), b, re.M)]
kinds = sorted(b.split(" Object;")[0].strip() for b in mine)
ids = {re.search(r"ID:\s+(\S+)", b).group(1) for b in mine}
assert kinds == ["Certificate", "Private Key", "Public Key"], kinds
assert len(ids) == 1 and len(next(iter(ids))) == 32, ids
assert all("never extractable" in b and "sensitive" in b and "Usage:      sign\n" in b + "\n"
           for b in mine if b.startswith("Private Key")), mine
PY
done
check "... the token's db certificate is the one written to db.cer" bash -c "
    pkcs11-tool --module '$MODULE' --token-label main --read-object --type cert --label db -o '$WORK/db-token.cer' >/dev/null 2>&1 &&
    cmp '$WORK/db-token.cer' '$WORK/keys/db.cer'"
for v in PK KEK db; do
    check "... $v.crt is self-signed by the token key (openssl verify), RSA-2048" bash -c "
        openssl verify -CAfile '$WORK/keys/$v.crt' '$WORK/keys/$v.crt' >/dev/null &&
        openssl x509 -in '$WORK/keys/$v.crt' -noout -text | grep -q 'Public-Key: (2048 bit)' &&
        pkcs11-tool --module '$MODULE' --token-label main --read-object --type pubkey --label $v -o '$WORK/$v.pub.der' >/dev/null 2>&1 &&
        cmp <(openssl pkey -pubin -inform DER -in '$WORK/$v.pub.der' -outform DER) <(openssl x509 -in '$WORK/keys/$v.crt' -pubkey -noout | openssl pkey -pubin -outform DER)"
done
check "its .auth updates enroll in setup mode: db, KEK, then PK" bash -c "
    '$REPROSIGN' efi apply --vars '$TEMPLATE' --name db '$WORK/keys/db.auth' --output '$WORK/kg1.fd' &&
    '$REPROSIGN' efi apply --vars '$WORK/kg1.fd' --name KEK '$WORK/keys/KEK.auth' --output '$WORK/kg2.fd' &&
    '$REPROSIGN' efi apply --vars '$WORK/kg2.fd' --name PK '$WORK/keys/PK.auth' --output '$WORK/kg.fd'"
check "... the updates are signed by the token keys (PK by PK, KEK by PK, db by KEK)" bash -c "
    '$REPROSIGN' efi list '$WORK/keys/PK.auth' | grep -q 'signed by: CN=reprosign PK' &&
    '$REPROSIGN' efi list '$WORK/keys/KEK.auth' | grep -q 'signed by: CN=reprosign PK' &&
    '$REPROSIGN' efi list '$WORK/keys/db.auth' | grep -q 'signed by: CN=reprosign KEK'"
refuses "a db update signed by the wrong key is refused by efi apply" "$WORK/bad.fd" "$REPROSIGN" efi apply \
    --vars "$WORK/kg.fd" --name db "$WORK/keys/KEK.auth" --output "$WORK/bad.fd"

mkpe "$WORK/hello.efi" --sections 2
DBKEY="pkcs11:token=main;object=db;type=private?$MP&pin-value=1234"
check "an EFI image signed with the token's db key verifies with sbverify against db.crt" bash -c "
    '$REPROSIGN' sign --key '$DBKEY' --cert '$WORK/keys/db.crt' '$WORK/hello.efi' --output '$WORK/hello.signed' &&
    sbverify --cert '$WORK/keys/db.crt' '$WORK/hello.signed' >/dev/null"
check "... with the certificate read from the token too" bash -c "
    '$REPROSIGN' sign --key '$DBKEY' --cert 'pkcs11:token=main;object=db;type=cert?$MP' '$WORK/hello.efi' --output '$WORK/hello2.signed' &&
    sbverify --cert '$WORK/keys/db.crt' '$WORK/hello2.signed' >/dev/null"
check "... and chain agrees it boots on the enrolled store" "$REPROSIGN" chain --vars "$WORK/kg.fd" "$WORK/hello.signed"
check "sbverify refuses it against KEK.crt" bash -c "! sbverify --cert '$WORK/keys/KEK.crt' '$WORK/hello.signed' >/dev/null 2>&1"

check "efi keygen --token --bits 4096 makes RSA-4096 keys" bash -c "
    '$REPROSIGN' efi keygen '$WORK/keys4096' --bits 4096 --token 'pkcs11:token=big?$MP&pin-value=1234' >/dev/null &&
    openssl x509 -in '$WORK/keys4096/db.crt' -noout -text | grep -q 'Public-Key: (4096 bit)' &&
    '$REPROSIGN' efi apply --vars '$TEMPLATE' --name db '$WORK/keys4096/db.auth' --output '$WORK/k4.fd'"

# Failures leave nothing behind, on disk or on the token.
before=$(objects main | grep -c 'Object;')
refuses "efi keygen --token refuses a token that already has the labels" "$WORK/again" \
    "$REPROSIGN" efi keygen "$WORK/again" --token "$TOKEN"
check "... and the token is as it was" bash -c "[ \$(pkcs11-tool --module '$MODULE' --token-label main --login --pin 1234 --list-objects 2>/dev/null | grep -c 'Object;') = $before ]"
pkcs11-tool --module "$MODULE" --token-label partial --login --pin 1234 --keypairgen --key-type rsa:2048 --label KEK >/dev/null 2>&1
refuses "efi keygen --token stops at KEK's label taken" "$WORK/partial" \
    "$REPROSIGN" efi keygen "$WORK/partial" --token "pkcs11:token=partial?$MP&pin-value=1234"
check "... and destroys the PK it had made on the token" bash -c "
    ! pkcs11-tool --module '$MODULE' --token-label partial --login --pin 1234 --list-objects 2>/dev/null | grep -q 'label: *PK\$' &&
    [ \$(pkcs11-tool --module '$MODULE' --token-label partial --login --pin 1234 --list-objects 2>/dev/null | grep -c 'Object;') = 2 ]"
refuses "efi keygen --token with a wrong PIN" "$WORK/wrongpin" \
    "$REPROSIGN" efi keygen "$WORK/wrongpin" --token "pkcs11:token=big?$MP&pin-value=0000"
refuses "efi keygen --token with a URI naming an object" "$WORK/obj" \
    "$REPROSIGN" efi keygen "$WORK/obj" --token "pkcs11:token=main;object=db?$MP&pin-value=1234"
refuses "efi keygen --token with no such token" "$WORK/none" \
    "$REPROSIGN" efi keygen "$WORK/none" --token "pkcs11:token=nosuch?$MP&pin-value=1234"
finish

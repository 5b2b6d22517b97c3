#!/bin/bash
# Keys on a PKCS#11 token (SoftHSM2): signing through a pkcs11: URI gives
# exactly the bytes the same key gives from a PEM file; PINs come from
# where they should and a wrong one stops before any output; lookups that
# fail say what was looked for; `token list` prints URIs that work.
source "$(dirname "$0")/../lib.sh"

MODULE=/usr/lib/softhsm/libsofthsm2.so
need_tool softhsm2-util
need_tool pkcs11-tool
[ -e "$MODULE" ] || skip "$MODULE is not installed"
need_fixtures shim
EFI=$FIXTURES/root/shim-unsigned/usr/lib/shim/fbx64.efi
export SOURCE_DATE_EPOCH=1700000000
unset REPROSIGN_PKCS11_PIN

# A token of our own, in $WORK.
mkdir -p "$WORK/tokens"
printf 'directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n' "$WORK/tokens" >"$WORK/softhsm2.conf"
export SOFTHSM2_CONF=$WORK/softhsm2.conf
softhsm2-util --init-token --free --label "reprosign test" --pin 1234 --so-pin 5678 >/dev/null ||
    skip "cannot create a SoftHSM2 token"
p11tool() { pkcs11-tool --module "$MODULE" --token-label "reprosign test" --login --pin 1234 "$@" >/dev/null 2>&1; }

make_key rsa
openssl pkey -in "$WORK/rsa.key" -outform DER -out "$WORK/rsa.key.der"
openssl req -new -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 -days 3650 \
    -subj "/CN=reprosign test ec" -keyout "$WORK/ec.key" -out "$WORK/ec.crt" 2>/dev/null
openssl pkey -in "$WORK/ec.key" -outform DER -out "$WORK/ec.key.der"
openssl x509 -in "$WORK/ec.crt" -outform DER -out "$WORK/ec.der"
p11tool --write-object "$WORK/rsa.key.der" --type privkey --id 01 --label "signing key" &&
    p11tool --write-object "$WORK/rsa.der" --type cert --id 01 --label "signing key" &&
    p11tool --write-object "$WORK/ec.key.der" --type privkey --id 02 --label ec &&
    p11tool --write-object "$WORK/ec.der" --type cert --id 02 --label ec ||
    skip "cannot import keys with pkcs11-tool"

MP="module-path=$MODULE"
KEY="pkcs11:token=reprosign%20test;object=signing%20key;type=private?$MP"
CERT="pkcs11:token=reprosign%20test;id=%01;type=cert?$MP"
printf '1234\n' >"$WORK/pin"
printf '9999\n' >"$WORK/badpin"

"$REPROSIGN" sign --key "$WORK/rsa.key" --cert "$WORK/rsa.crt" --output "$WORK/pem.efi" "$EFI" ||
    fail "signing with the PEM key"

check "EFI image signed through pkcs11: (PIN from REPROSIGN_PKCS11_PIN) equals the PEM signature" \
    bash -c 'REPROSIGN_PKCS11_PIN=1234 "$0" sign --key "$1" --cert "$2" --output "$3/env.efi" "$4" && cmp "$3/env.efi" "$3/pem.efi"' \
    "$REPROSIGN" "$KEY" "$WORK/rsa.crt" "$WORK" "$EFI"
check "pin-source=file: and the certificate read from the token give the same bytes" \
    bash -c '"$0" sign --key "$1&pin-source=file:$3/pin" --cert "$2" --output "$3/file.efi" "$4" && cmp "$3/file.efi" "$3/pem.efi"' \
    "$REPROSIGN" "$KEY" "$CERT" "$WORK" "$EFI"
check "pin-value in the URI (tests only) works, type= implied by --key/--cert" \
    bash -c '"$0" sign --key "pkcs11:token=reprosign%20test;object=signing%20key?$1&pin-value=1234" \
        --cert "pkcs11:token=reprosign%20test;object=signing%20key?$1" --output "$2/value.efi" "$3" &&
        cmp "$2/value.efi" "$2/pem.efi"' "$REPROSIGN" "$MP" "$WORK" "$EFI"
check "the EFI signature verifies against the certificate" \
    "$REPROSIGN" verify "$WORK/file.efi" --cert "$WORK/rsa.crt"
check "without module-path the module comes from p11-kit's configuration" \
    bash -c 'REPROSIGN_PKCS11_PIN=1234 "$0" sign --key "pkcs11:token=reprosign%20test;object=signing%20key" \
        --cert "pkcs11:token=reprosign%20test;object=signing%20key" --output "$1/config.efi" "$2" &&
        cmp "$1/config.efi" "$1/pem.efi"' "$REPROSIGN" "$WORK" "$EFI"

refuses "a wrong PIN" "$WORK/bad.efi" \
    "$REPROSIGN" sign --key "$KEY&pin-source=file:$WORK/badpin" --cert "$WORK/rsa.crt" --output "$WORK/bad.efi" "$EFI"
grep -q 'PIN incorrect' "$WORK/.err" && ! grep -q 9999 "$WORK/.err" || fail "wrong PIN: message '$(cat "$WORK/.err")'"
refuses "a wrong PIN in the environment" "$WORK/bad.efi" \
    env REPROSIGN_PKCS11_PIN=9999 "$REPROSIGN" sign --key "$KEY" --cert "$WORK/rsa.crt" --output "$WORK/bad.efi" "$EFI"
check "the token still accepts the right PIN after two wrong ones (no retries of ours)" \
    env REPROSIGN_PKCS11_PIN=1234 "$REPROSIGN" sign --key "$KEY" --cert "$CERT" --output "$WORK/again.efi" "$EFI"
refuses "no PIN source and no terminal" "$WORK/bad.efi" \
    setsid "$REPROSIGN" sign --key "$KEY" --cert "$WORK/rsa.crt" --output "$WORK/bad.efi" "$EFI"
refuses "a missing token" "$WORK/bad.efi" \
    "$REPROSIGN" sign --key "pkcs11:token=nosuch;object=signing%20key?$MP&pin-value=1234" --cert "$WORK/rsa.crt" \
    --output "$WORK/bad.efi" "$EFI"
grep -q "token=nosuch.*no token matches.*'reprosign test'" "$WORK/.err" || fail "missing token: message '$(cat "$WORK/.err")'"
refuses "a missing key object" "$WORK/bad.efi" \
    "$REPROSIGN" sign --key "pkcs11:token=reprosign%20test;object=nosuch?$MP&pin-value=1234" --cert "$WORK/rsa.crt" \
    --output "$WORK/bad.efi" "$EFI"
grep -q "object=nosuch.*no private key matches (token 'reprosign test' has: .*signing key" "$WORK/.err" ||
    fail "missing key: message '$(cat "$WORK/.err")'"
grep -q 'pin-value=(hidden)' "$WORK/.err" && ! grep -q 1234 "$WORK/.err" || fail "the PIN shows in '$(cat "$WORK/.err")'"
refuses "a missing certificate object" "$WORK/bad.efi" \
    env REPROSIGN_PKCS11_PIN=1234 "$REPROSIGN" sign --key "$KEY" --cert "pkcs11:token=reprosign%20test;id=%09?$MP" \
    --output "$WORK/bad.efi" "$EFI"
grep -q "id=%09.*no certificate matches" "$WORK/.err" || fail "missing cert: message '$(cat "$WORK/.err")'"
refuses "an RSA key with an EC certificate" "$WORK/bad.efi" \
    env REPROSIGN_PKCS11_PIN=1234 "$REPROSIGN" sign --key "$KEY" --cert "$WORK/ec.crt" --output "$WORK/bad.efi" "$EFI"
grep -q "does not match" "$WORK/.err" || fail "key/cert mismatch: message '$(cat "$WORK/.err")'"
make_key other
refuses "a key and a certificate that do not belong together" "$WORK/bad.efi" \
    env REPROSIGN_PKCS11_PIN=1234 "$REPROSIGN" sign --key "$KEY" --cert "$WORK/other.crt" --output "$WORK/bad.efi" "$EFI"
refuses "an unknown attribute" "$WORK/bad.efi" \
    "$REPROSIGN" sign --key "pkcs11:token=reprosign%20test;colour=blue?$MP" --cert "$WORK/rsa.crt" \
    --output "$WORK/bad.efi" "$EFI"
refuses "a misspelt pin-source" "$WORK/bad.efi" \
    "$REPROSIGN" sign --key "$KEY&pin-sauce=file:$WORK/pin" --cert "$WORK/rsa.crt" --output "$WORK/bad.efi" "$EFI"

check "ECDSA P-256 on the token signs, and the signature verifies with the certificate" \
    bash -c 'REPROSIGN_PKCS11_PIN=1234 "$0" sign --key "pkcs11:token=reprosign%20test;id=%02?$1" \
        --cert "pkcs11:token=reprosign%20test;id=%02?$1" --output "$2/ec.efi" "$3" &&
        "$0" verify "$2/ec.efi" --cert "$2/ec.crt"' "$REPROSIGN" "$MP" "$WORK" "$EFI"

"$REPROSIGN" token list --module "$MODULE" >"$WORK/list" 2>&1
REPROSIGN_PKCS11_PIN=1234 "$REPROSIGN" token list --module "$MODULE" --login >"$WORK/list-login" 2>&1
check "token list shows the certificates" grep -q "certificate .*label 'signing key'  id 01" "$WORK/list"
check "token list --login shows the private keys" grep -q "private key  RSA   label 'signing key'  id 01" "$WORK/list-login"
key_uri=$(grep -A1 "private key  RSA" "$WORK/list-login" | sed -n 's/^ *\(pkcs11:.*\)$/\1/p')
cert_uri=$(grep -A1 "certificate .*id 01" "$WORK/list" | sed -n 's/^ *\(pkcs11:.*\)$/\1/p')
check "URIs pasted from token list sign the same bytes" \
    bash -c 'REPROSIGN_PKCS11_PIN=1234 "$0" sign --key "$1" --cert "$2" --output "$3/listed.efi" "$4" &&
        cmp "$3/listed.efi" "$3/pem.efi"' "$REPROSIGN" "$key_uri" "$cert_uri" "$WORK" "$EFI"

# Kernel modules, when the kernel fixture can be had.
if bash "$TESTS_DIR/fetch-fixtures.sh" "$FIXTURES" kernel >/dev/null 2>&1; then
    ko=$(find "$FIXTURES"/kernel/lib/modules/*/kernel -name '*.ko' | sort | head -n 1)
    "$REPROSIGN" strip "$ko" --output "$WORK/unsigned.ko" &&
        "$REPROSIGN" sign --key "$WORK/rsa.key" --cert "$WORK/rsa.crt" --output "$WORK/pem.ko" "$WORK/unsigned.ko" ||
        fail "signing a kernel module with the PEM key"
    check "a kernel module signed through pkcs11: equals the PEM signature" \
        bash -c 'REPROSIGN_PKCS11_PIN=1234 "$0" sign --key "$1" --cert "$2" --output "$3/tok.ko" "$3/unsigned.ko" &&
            cmp "$3/tok.ko" "$3/pem.ko"' "$REPROSIGN" "$KEY" "$CERT" "$WORK"
    # Forty modules on four workers, each signing on a session of its own.
    kroot=$(readlink -f "$FIXTURES/kernel")
    pkg=$(basename "$kroot")
    (cd "$kroot" && find lib/modules -name '*.ko' | sort | head -n 40) >"$WORK/kos"
    while read -r f; do
        mkdir -p "$WORK/pkgs/$pkg/$(dirname "$f")"
        "$REPROSIGN" strip "$kroot/$f" --output "$WORK/pkgs/$pkg/$f" || fail "stripping $f"
    done <"$WORK/kos"
    python3 - "$WORK/kos" "$pkg" >"$WORK/files.json" <<'PY'
import json, sys
files = [l.strip() for l in open(sys.argv[1]) if l.strip()]
print(json.dumps({"packages": {sys.argv[2]: {"trusted_certs": [], "files": [
    {"sig_type": "linux-module", "file": f} for f in files]}}}))
PY
    "$REPROSIGN" sign-template --quiet "$WORK/files.json" --packages "$WORK/pkgs" --key "$WORK/rsa.key" \
        --cert "$WORK/rsa.crt" --jobs 1 --output "$WORK/tpl-pem" || fail "sign-template with the PEM key"
    check "sign-template --jobs 4 through pkcs11: signs 40 modules as the PEM key does" \
        bash -c 'REPROSIGN_PKCS11_PIN=1234 "$0" sign-template --quiet "$1/files.json" --packages "$1/pkgs" \
            --key "$2" --cert "$3" --jobs 4 --output "$1/tpl-tok" && diff -r "$1/tpl-pem/signatures" "$1/tpl-tok/signatures"' \
        "$REPROSIGN" "$WORK" "$KEY" "$CERT"
else
    echo "# kernel fixture unavailable: module case skipped"
fi

# All of the above went through p11-kit, loaded on first use: a command
# that needs no token must not pay for mapping it (and libffi).
if readelf -h "$REPROSIGN" >/dev/null 2>&1; then
    check "reprosign does not link libp11-kit (it is loaded with dlopen)" \
        bash -c '! readelf -d "$0" | grep -q "NEEDED.*libp11-kit"' "$REPROSIGN"
fi

finish

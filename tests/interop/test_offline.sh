#!/bin/bash
# Offline signing in three steps (prepare, sign-blob, finish) gives the
# same bytes as signing in one step, for EFI images and kernel modules, with
# the key in a PEM file or on a token; and refuses what does not fit.
. "$TESTS_DIR/lib.sh"
need_fixtures shim
need_fixtures kernel
MODULE=/usr/lib/softhsm/libsofthsm2.so
need_tool softhsm2-util; need_tool pkcs11-tool

efi=$FIXTURES/root/shim-unsigned/usr/lib/shim/fbx64.efi
mod=$(find "$(readlink -f "$FIXTURES/kernel")/lib/modules" -name 'af_key.ko' | head -1)
"$REPROSIGN" strip "$mod" --output "$WORK/m.ko"
cp "$efi" "$WORK/e.efi"
make_key db
make_key other
export SOURCE_DATE_EPOCH=1700000000

# A token holding the db key.
printf 'directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n' "$WORK/tokens" >"$WORK/softhsm2.conf"
mkdir -p "$WORK/tokens"
export SOFTHSM2_CONF=$WORK/softhsm2.conf
softhsm2-util --init-token --free --label offline --pin 1234 --so-pin 5678 >/dev/null
openssl pkey -in "$WORK/db.key" -outform DER -out "$WORK/db.key.der"
pkcs11-tool --module "$MODULE" --token-label offline --login --pin 1234 --write-object "$WORK/db.key.der" \
    --type privkey --id 01 --label db >/dev/null 2>&1
printf 1234 >"$WORK/pin"
token="pkcs11:token=offline;object=db?module-path=$MODULE&pin-source=file:$WORK/pin"

for f in e.efi m.ko; do
    for opts in "" "--hash sha384" "--no-signing-time" "--keyid"; do
        [ "$f" = e.efi ] && [ "$opts" = --keyid ] && continue
        name="$f${opts:+ $opts}"
        "$REPROSIGN" sign $opts --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK/$f" --output "$WORK/one" 2>/dev/null
        "$REPROSIGN" sign $opts --detached --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK/$f" --output "$WORK/one.sig" 2>/dev/null
        check "$name: prepare" "$REPROSIGN" sign --prepare-offline $opts --cert "$WORK/db.crt" "$WORK/$f" --output "$WORK/req"
        for key in "$WORK/db.key" "$token"; do
            kind=pem; [ "$key" = "$token" ] && kind=token
            rm -f "$WORK/value" "$WORK/three" "$WORK/three.sig"
            check "$name ($kind): sign-blob" "$REPROSIGN" sign-blob "$WORK/req" --key "$key" --output "$WORK/value"
            check "$name ($kind): finish into the file" \
                "$REPROSIGN" sign --finish "$WORK/req" --signature "$WORK/value" --cert "$WORK/db.crt" "$WORK/$f" --output "$WORK/three"
            check "$name ($kind): identical to one-step signing" same_bytes "$WORK/three" "$WORK/one"
            check "$name ($kind): finish as a detached signature" \
                "$REPROSIGN" sign --finish "$WORK/req" --signature "$WORK/value" --output "$WORK/three.sig"
            check "$name ($kind): identical to sign --detached" same_bytes "$WORK/three.sig" "$WORK/one.sig"
        done
    done
done

"$REPROSIGN" sign --prepare-offline --cert "$WORK/db.crt" "$WORK/e.efi" --output "$WORK/req"
"$REPROSIGN" sign-blob "$WORK/req" --key "$WORK/db.key" --output "$WORK/value"
refuses "sign-blob with another key" "$WORK/v2" "$REPROSIGN" sign-blob "$WORK/req" --key "$WORK/other.key" --output "$WORK/v2"
refuses "sign-blob with another certificate than the request's" "$WORK/v2" \
    "$REPROSIGN" sign-blob "$WORK/req" --key "$WORK/other.key" --cert "$WORK/other.crt" --output "$WORK/v2"
python3 -c "
import json; d=json.load(open('$WORK/req')); d['image_digest']='00'*32; json.dump(d, open('$WORK/tampered','w'))"
refuses "a request whose digest to sign does not match its contents" "$WORK/v2" \
    "$REPROSIGN" sign-blob "$WORK/tampered" --key "$WORK/db.key" --output "$WORK/v2"
check "... says so" grep -q 'tbs_digest does not match' "$WORK/.err"
python3 -c "
import json; d=json.load(open('$WORK/req')); d['type']='something'; json.dump(d, open('$WORK/wrongtype','w'))"
refuses "not a request" "$WORK/v2" "$REPROSIGN" sign-blob "$WORK/wrongtype" --key "$WORK/db.key" --output "$WORK/v2"
for bad in "'x' * 5000" "5"; do
    python3 -c "
import json; d=json.load(open('$WORK/req')); d['file']=$bad; json.dump(d, open('$WORK/badfile','w'))"
    refuses "a request whose file is not a path ($bad)" "$WORK/v2" \
        "$REPROSIGN" sign-blob "$WORK/badfile" --key "$WORK/db.key" --output "$WORK/v2"
    check "... says so" grep -q 'file is not a path of at most 4096 bytes' "$WORK/.err"
done
python3 -c "
import json; d=json.load(open('$WORK/req')); del d['certificate']; d['certificate_sha256']='ab'*32
json.dump(d, open('$WORK/wire','w'))"
refuses "a request in the socket's form (no certificate)" "$WORK/v2" \
    "$REPROSIGN" sign-blob "$WORK/wire" --key "$WORK/db.key" --output "$WORK/v2"
check "... says only the service reads it" grep -q 'only the signing service reads a request without its certificate' "$WORK/.err"
head -c 256 /dev/urandom >"$WORK/junk"
refuses "finish with a signature value that is not the key's" "$WORK/x" \
    "$REPROSIGN" sign --finish "$WORK/req" --signature "$WORK/junk" --output "$WORK/x"
refuses "finish with another certificate" "$WORK/x" \
    "$REPROSIGN" sign --finish "$WORK/req" --signature "$WORK/value" --cert "$WORK/other.crt" --output "$WORK/x"
refuses "finish with a signature value that is not there" "$WORK/x" \
    "$REPROSIGN" sign --finish "$WORK/req" --signature "$WORK/missing" --output "$WORK/x"
check "... naming it" grep -qF "reprosign: $WORK/missing: " "$WORK/.err"
refuses "finish with a request that is not there" "$WORK/x" \
    "$REPROSIGN" sign --finish "$WORK/missing-req" --signature "$WORK/value" --output "$WORK/x"
check "... naming it" grep -qF "reprosign: $WORK/missing-req: " "$WORK/.err"
cp "$WORK/e.efi" "$WORK/changed.efi"
printf 'X' | dd of="$WORK/changed.efi" bs=1 seek=5000 conv=notrunc status=none
refuses "finish into a file that is not the one prepared" "$WORK/x" \
    "$REPROSIGN" sign --finish "$WORK/req" --signature "$WORK/value" "$WORK/changed.efi" --output "$WORK/x"
"$REPROSIGN" sign --prepare-offline --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK/e.efi" --output "$WORK/x" 2>/dev/null
rc=$?
check "prepare takes no key (usage error)" bash -c "[ $rc -eq 2 ] && [ ! -e '$WORK/x' ]"
check "the request holds no key material" bash -c "! grep -qi 'PRIVATE' '$WORK/req'"
finish

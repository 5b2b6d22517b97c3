#!/bin/bash
# Malformed images, signatures, keys and arguments: each command must fail
# with one 'reprosign: FILE: reason' line and exit 1, leave no output, and
# leave its input untouched.
. "$TESTS_DIR/lib.sh"
need_tool python3
make_key db
make_key other
mkpe() { python3 "$TESTS_DIR/tools/mkpe.py" "$@"; }

mkpe "$WORK/good.efi"
"$REPROSIGN" sign --detached --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK/good.efi" --output "$WORK/good.sig"

for kind in $(mkpe x --corrupt list); do
    bad=$WORK/$kind.efi
    mkpe "$bad" --corrupt "$kind"
    cp "$bad" "$WORK/$kind.orig"
    if [ "$kind" = garbage-signature ]; then
        # Structurally a signed image: reading commands report the bad signature.
        refuses "$kind: list" "" "$REPROSIGN" list "$bad"
        refuses "$kind: detach" "$WORK/$kind.sig" "$REPROSIGN" detach "$bad" --index 1 --output "$WORK/$kind.sig"
        check "$kind: verify fails" bash -c "! '$REPROSIGN' verify '$bad' --cert '$WORK/db.crt' >/dev/null 2>&1"
        continue
    fi
    refuses "$kind: list" "" "$REPROSIGN" list "$bad"
    refuses "$kind: digest" "" "$REPROSIGN" digest "$bad"
    refuses "$kind: verify" "" "$REPROSIGN" verify "$bad" --cert "$WORK/db.crt"
    refuses "$kind: sign" "$WORK/$kind.out" "$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$bad" --output "$WORK/$kind.out"
    refuses "$kind: sign to FILE.signed" "$bad.signed" "$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$bad"
    refuses "$kind: attach" "$WORK/$kind.out" "$REPROSIGN" attach "$WORK/good.sig" "$bad" --output "$WORK/$kind.out"
    refuses "$kind: attach in place" "" "$REPROSIGN" attach "$WORK/good.sig" "$bad"
    refuses "$kind: detach" "$WORK/$kind.sig" "$REPROSIGN" detach "$bad" --output "$WORK/$kind.sig"
    refuses "$kind: strip" "$WORK/$kind.out" "$REPROSIGN" strip "$bad" --output "$WORK/$kind.out"
    check "$kind: input untouched" same_bytes "$bad" "$WORK/$kind.orig"
done

# Garbage and mismatched signatures.
head -c 700 /dev/urandom >"$WORK/random.sig"
refuses "attach: random bytes as a signature" "$WORK/r.out" "$REPROSIGN" attach "$WORK/random.sig" "$WORK/good.efi" --output "$WORK/r.out"
check "... naming the signature, then the image" grep -qF "reprosign: $WORK/random.sig: attaching to $WORK/good.efi: " \
    "$WORK/.err"
: >"$WORK/empty.sig"
refuses "attach: empty signature" "$WORK/r.out" "$REPROSIGN" attach "$WORK/empty.sig" "$WORK/good.efi" --output "$WORK/r.out"
head -c 300 "$WORK/good.sig" >"$WORK/short.sig"
refuses "attach: truncated signature" "$WORK/r.out" "$REPROSIGN" attach "$WORK/short.sig" "$WORK/good.efi" --output "$WORK/r.out"
mkpe "$WORK/other.efi" --trailing 8
refuses "attach: signature of another image" "$WORK/r.out" "$REPROSIGN" attach "$WORK/good.sig" "$WORK/other.efi" --output "$WORK/r.out"
check "... naming both, and both digests" grep -qE \
    "^reprosign: $WORK/good.sig: attaching to $WORK/other.efi: signature does not match the image: signed digest sha256:[0-9a-f]{64}, image digest sha256:[0-9a-f]{64}$" \
    "$WORK/.err"

# Keys and certificates.
refuses "sign: key and certificate do not match" "$WORK/k.out" \
    "$REPROSIGN" sign --key "$WORK/other.key" --cert "$WORK/db.crt" "$WORK/good.efi" --output "$WORK/k.out"
refuses "sign: missing key file" "$WORK/k.out" \
    "$REPROSIGN" sign --key "$WORK/nope.key" --cert "$WORK/db.crt" "$WORK/good.efi" --output "$WORK/k.out"
refuses "sign: certificate file is not a certificate" "$WORK/k.out" \
    "$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.key" "$WORK/good.efi" --output "$WORK/k.out"
refuses "sign: missing input" "$WORK/k.out" \
    "$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK/nope.efi" --output "$WORK/k.out"
refuses "sign: a directory as input" "$WORK/k.out" \
    "$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK" --output "$WORK/k.out"
refuses "sign: output directory does not exist" "" \
    "$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK/good.efi" --output "$WORK/no/such/dir.efi"
SOURCE_DATE_EPOCH=yesterday "$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK/good.efi" --output "$WORK/k.out" 2>/dev/null
rc=$?
check "sign: invalid SOURCE_DATE_EPOCH is a usage error" bash -c "[ $rc -eq 2 ] && [ ! -e '$WORK/k.out' ]"
head -c 5000 /dev/urandom >"$WORK/random.bin"
refuses "list: not a PE image" "" "$REPROSIGN" list "$WORK/random.bin"
refuses "strip: unsigned image" "$WORK/s.out" "$REPROSIGN" strip "$WORK/good.efi" --output "$WORK/s.out"
refuses "detach: unsigned image" "$WORK/s.sig" "$REPROSIGN" detach "$WORK/good.efi" --output "$WORK/s.sig"
"$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK/good.efi" --output "$WORK/signed.efi"
refuses "detach: index out of range" "$WORK/s.sig" "$REPROSIGN" detach "$WORK/signed.efi" --index 3 --output "$WORK/s.sig"
refuses "strip: index out of range" "$WORK/s.out" "$REPROSIGN" strip "$WORK/signed.efi" --index 3 --output "$WORK/s.out"
# One byte of the first section changed after signing: the signature is
# good, the image is not the one it signed.
python3 -c "
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
pe = struct.unpack_from('<I', d, 0x3c)[0]
d[struct.unpack_from('<I', d, pe + 24 + 60)[0]] ^= 1
open(sys.argv[2], 'wb').write(d)" "$WORK/signed.efi" "$WORK/changed.efi"
refuses "verify: an image changed after signing" "" "$REPROSIGN" verify "$WORK/changed.efi" --cert "$WORK/db.crt"
cp "$WORK/.out" "$WORK/changed.out"
check "... because its digest is not the signed one" grep -q "FAILED: image digest does not match the signed digest" \
    "$WORK/changed.out"

# Usage errors exit 2.
for args in "" "sign" "sign --key a" "attach onlyone" "detach" "detach x y" "verify x" "list" "bogus" "digest --hash md5 x" "strip --index -1 x"; do
    "$REPROSIGN" $args >/dev/null 2>&1
    rc=$?
    check "usage error exits 2: reprosign $args" test "$rc" -eq 2
done
check "--help on every command" bash -c "for c in sign attach detach strip verify list digest; do '$REPROSIGN' \$c --help | grep -q '^usage: reprosign' || exit 1; done"
finish

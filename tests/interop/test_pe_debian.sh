#!/bin/bash
# Debian's real shim binaries: reattaching Debian's own detached signatures
# to the unsigned builds must give Debian's signed files byte for byte.
. "$TESTS_DIR/lib.sh"
need_fixtures shim
need_tool sbverify; need_tool pesign; need_tool objcopy

unsigned=$FIXTURES/root/shim-unsigned/usr/lib/shim
signed=$FIXTURES/root/shim-helpers-amd64-signed/usr/lib/shim

bash "$TESTS_DIR/tools/vendor-cert.sh" "$unsigned/shimx64.efi" "$WORK/debian-ca.der"
check "shim's vendor certificate is the Debian Secure Boot CA" \
    bash -c "openssl x509 -inform DER -in '$WORK/debian-ca.der' -noout -subject | grep -q 'Debian Secure Boot CA'"

for bin in fbx64 mmx64; do
    check "$bin: detach Debian's signature" "$REPROSIGN" detach "$signed/$bin.efi.signed" --output "$WORK/$bin.sig"
    check "$bin: detached signature is sbattach --detach's" bash -c "
        cp '$signed/$bin.efi.signed' '$WORK/$bin.tmp' && sbattach --detach '$WORK/$bin.sbsig' '$WORK/$bin.tmp' >/dev/null 2>&1 &&
        cmp -s '$WORK/$bin.sbsig' '$WORK/$bin.sig'"
    check "$bin: attach to the unsigned build" "$REPROSIGN" attach "$WORK/$bin.sig" "$unsigned/$bin.efi" --output "$WORK/$bin.efi.signed"
    check "$bin: result is Debian's signed file byte for byte" same_bytes "$WORK/$bin.efi.signed" "$signed/$bin.efi.signed"
    check "$bin: verifies against the Debian CA from shim" "$REPROSIGN" verify "$signed/$bin.efi.signed" --cert "$WORK/debian-ca.der"
    check "$bin: digest of the unsigned build is the digest Debian signed" bash -c "
        '$REPROSIGN' list '$signed/$bin.efi.signed' | grep -q \"signed digest:  sha256:\$('$REPROSIGN' digest '$unsigned/$bin.efi')\""
    check "$bin: list names Debian's signer" bash -c "'$REPROSIGN' list '$signed/$bin.efi.signed' | grep -q 'Debian Secure Boot Signer'"
    check "$bin: strip equals sbattach --remove" bash -c "
        cp '$signed/$bin.efi.signed' '$WORK/$bin.sbstrip' && sbattach --remove '$WORK/$bin.sbstrip' >/dev/null 2>&1 &&
        '$REPROSIGN' strip '$signed/$bin.efi.signed' --output '$WORK/$bin.strip' && cmp -s '$WORK/$bin.strip' '$WORK/$bin.sbstrip'"
done
# pesign hashes the file as it is; for an 8-aligned image that is the same.
# It prints "hash: HEX" (0.112, bookworm's) or "HEX FILE" (116, trixie's).
check "fbx64: digest agrees with pesign" bash -c "
    [ \"\$(pesign -h -i '$unsigned/fbx64.efi' 2>/dev/null | grep -oE '[0-9a-f]{64}' | head -n 1)\" = \"\$('$REPROSIGN' digest '$unsigned/fbx64.efi')\" ]"
# fbx64.efi was 8-aligned with a valid checksum, so strip gives it back exactly.
check "fbx64: strip gives back the unsigned build exactly" same_bytes "$WORK/fbx64.strip" "$unsigned/fbx64.efi"

check "unsigned image fails verify" bash -c "! '$REPROSIGN' verify '$unsigned/fbx64.efi' --cert '$WORK/debian-ca.der' 2>/dev/null"
make_key other
check "Debian's signature does not verify against another CA" bash -c "
    ! '$REPROSIGN' verify '$signed/fbx64.efi.signed' --cert '$WORK/other.crt' >/dev/null 2>&1"
check "list --json is valid JSON with one signature" bash -c "
    '$REPROSIGN' list --json '$signed/fbx64.efi.signed' | python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d[\"signatures\"])==1 and d[\"format\"]==\"pe\"'"
check "verify --json explains the decision" bash -c "
    '$REPROSIGN' verify --json '$signed/fbx64.efi.signed' --cert '$WORK/debian-ca.der' | python3 -c 'import json,sys; d=json.load(sys.stdin); s=d[\"signatures\"][0]; assert d[\"valid\"] and s[\"anchor\"]==\"CN=Debian Secure Boot CA\" and s[\"signed_digest\"]==s[\"image_digest\"]'"

# A rebuild that did not reproduce: the signature must be refused, naming both digests.
cp "$unsigned/fbx64.efi" "$WORK/tampered.efi"
printf 'X' | dd of="$WORK/tampered.efi" bs=1 seek=5000 conv=notrunc status=none
refuses "attach refuses a signature for other bytes" "$WORK/tampered.out" \
    "$REPROSIGN" attach "$WORK/fbx64.sig" "$WORK/tampered.efi" --output "$WORK/tampered.out"
check "the refusal names both digests" grep -q 'signed digest sha256:f08e1ed5.*image digest sha256:' "$WORK/.err"
cp "$WORK/tampered.efi" "$WORK/tampered.orig"
refuses "in-place attach refuses too" "" "$REPROSIGN" attach "$WORK/fbx64.sig" "$WORK/tampered.efi"
check "in-place refusal leaves the input untouched" same_bytes "$WORK/tampered.efi" "$WORK/tampered.orig"
finish

#!/bin/bash
# Signatures made by reprosign, judged by sbsigntool, osslsigncode and pesign.
. "$TESTS_DIR/lib.sh"
need_fixtures shim
need_tool sbsign; need_tool osslsigncode; need_tool pesign

efi=$FIXTURES/root/shim-unsigned/usr/lib/shim/fbx64.efi
make_key db
make_key other
export SOURCE_DATE_EPOCH=1700000000

check "sign" "$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$efi" --output "$WORK/a.efi"
check "sbverify accepts it" sbverify --cert "$WORK/db.crt" "$WORK/a.efi"
check "osslsigncode accepts it" osslsigncode verify -CAfile "$WORK/db.crt" -in "$WORK/a.efi"
check "pesign lists it" bash -c "pesign -S -i '$WORK/a.efi' 2>&1 | grep -q 'common name is reprosign test db'"
check "reprosign verifies it" "$REPROSIGN" verify "$WORK/a.efi" --cert "$WORK/db.crt"
check "the input is untouched" bash -c "'$REPROSIGN' list '$efi' | grep -q 'no signatures'"
check "signing time is SOURCE_DATE_EPOCH" bash -c "'$REPROSIGN' list '$WORK/a.efi' | grep -q '2023-11-14T22:13:20Z'"

check "sign again" "$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$efi" --output "$WORK/b.efi"
check "same inputs and SOURCE_DATE_EPOCH give identical bytes" same_bytes "$WORK/a.efi" "$WORK/b.efi"
check "--no-signing-time" "$REPROSIGN" sign --no-signing-time --key "$WORK/db.key" --cert "$WORK/db.crt" "$efi" --output "$WORK/nt.efi"
check "--no-signing-time leaves signingTime out" bash -c "'$REPROSIGN' list '$WORK/nt.efi' | grep -q 'signing time:   (none)'"
check "... and still verifies" sbverify --cert "$WORK/db.crt" "$WORK/nt.efi"

cp "$efi" "$WORK/default.efi"
check "sign without --output writes FILE.signed" "$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK/default.efi"
check "FILE.signed equals --output" same_bytes "$WORK/default.efi.signed" "$WORK/a.efi"

for alg in sha384 sha512; do
    check "sign --hash $alg" "$REPROSIGN" sign --hash "$alg" --key "$WORK/db.key" --cert "$WORK/db.crt" "$efi" --output "$WORK/$alg.efi"
    check "osslsigncode accepts the $alg signature" osslsigncode verify -CAfile "$WORK/db.crt" -in "$WORK/$alg.efi"
    check "$alg signed digest equals 'digest --hash $alg'" bash -c "
        '$REPROSIGN' list --json '$WORK/$alg.efi' | grep -q \"\$('$REPROSIGN' digest --hash $alg '$efi')\""
    check "reprosign verifies the $alg signature" "$REPROSIGN" verify "$WORK/$alg.efi" --cert "$WORK/db.crt"
done

# A second signature is appended after the first, as sbsign does.
check "add a second signature" "$REPROSIGN" sign --key "$WORK/other.key" --cert "$WORK/other.crt" "$WORK/a.efi" --output "$WORK/two.efi"
check "list shows two signatures" bash -c "[ \$('$REPROSIGN' list --json '$WORK/two.efi' | grep -c '\"index\"') -eq 2 ]"
check "sbverify sees two signatures" bash -c "sbverify --list '$WORK/two.efi' 2>/dev/null | grep -q 'signature 2'"
check "either CA verifies it" bash -c "'$REPROSIGN' verify '$WORK/two.efi' --cert '$WORK/other.crt' && '$REPROSIGN' verify '$WORK/two.efi' --cert '$WORK/db.crt'"
check "the same via sbsign appends identically" bash -c "
    sbsign --key '$WORK/other.key' --cert '$WORK/other.crt' --detached '$WORK/a.efi' --output '$WORK/other.sig' >/dev/null 2>&1 &&
    cp '$WORK/a.efi' '$WORK/two.sb' && sbattach --attach '$WORK/other.sig' '$WORK/two.sb' >/dev/null 2>&1 &&
    '$REPROSIGN' attach '$WORK/other.sig' '$WORK/a.efi' --output '$WORK/two.rs' && cmp -s '$WORK/two.sb' '$WORK/two.rs'"
check "strip --index 1 removes the second" "$REPROSIGN" strip --index 1 "$WORK/two.efi" --output "$WORK/one.efi"
check "... giving back the once-signed file" same_bytes "$WORK/one.efi" "$WORK/a.efi"
check "strip --index 0 keeps the second" bash -c "
    '$REPROSIGN' strip --index 0 '$WORK/two.efi' --output '$WORK/second.efi' &&
    '$REPROSIGN' verify '$WORK/second.efi' --cert '$WORK/other.crt' >/dev/null &&
    ! '$REPROSIGN' verify '$WORK/second.efi' --cert '$WORK/db.crt' >/dev/null 2>&1"
check "strip removes all" "$REPROSIGN" strip "$WORK/two.efi" --output "$WORK/none.efi"
check "... giving back the unsigned image" same_bytes "$WORK/none.efi" "$efi"
check "detach --index 1" "$REPROSIGN" detach "$WORK/two.rs" --index 1 --output "$WORK/idx1.sig"
check "... is the second signature" same_bytes "$WORK/idx1.sig" "$WORK/other.sig"

# Detached signatures cross between tools in both directions.
check "sbsign --detached" sbsign --key "$WORK/db.key" --cert "$WORK/db.crt" --detached "$efi" --output "$WORK/sb.sig"
cp "$efi" "$WORK/sbattach.efi"
check "sbattach --attach" sbattach --attach "$WORK/sb.sig" "$WORK/sbattach.efi"
check "reprosign attach" "$REPROSIGN" attach "$WORK/sb.sig" "$efi" --output "$WORK/rsattach.efi"
check "reprosign attach of an sbsign signature equals sbattach's output" same_bytes "$WORK/rsattach.efi" "$WORK/sbattach.efi"
check "reprosign sign --detached" "$REPROSIGN" sign --detached --key "$WORK/db.key" --cert "$WORK/db.crt" "$efi" --output "$WORK/rs.sig"
cp "$efi" "$WORK/cross.efi"
check "sbattach attaches reprosign's detached signature" sbattach --attach "$WORK/rs.sig" "$WORK/cross.efi"
check "... and sbverify accepts the result" sbverify --cert "$WORK/db.crt" "$WORK/cross.efi"
check "... which equals reprosign's own signed file" same_bytes "$WORK/cross.efi" "$WORK/a.efi"
cp "$efi" "$WORK/inplace.efi"
check "attach in place" "$REPROSIGN" attach "$WORK/rs.sig" "$WORK/inplace.efi"
check "... gives the same bytes" same_bytes "$WORK/inplace.efi" "$WORK/a.efi"
check "attach keeps the file mode" bash -c "chmod 0751 '$WORK/inplace.efi' && '$REPROSIGN' strip '$WORK/inplace.efi' && [ \$(stat -c %a '$WORK/inplace.efi') = 751 ]"
# In place through a symlink, the file it leads to changes and the link
# stays, as with sbattach.
mkdir -p "$WORK/links"
cp "$efi" "$WORK/links/real.efi"
ln -s real.efi "$WORK/links/link.efi"
cp "$efi" "$WORK/links/sb-real.efi"
ln -s sb-real.efi "$WORK/links/sb-link.efi"
sbattach --attach "$WORK/rs.sig" "$WORK/links/sb-link.efi" >/dev/null 2>&1
check "attach in place through a symlink" "$REPROSIGN" attach "$WORK/rs.sig" "$WORK/links/link.efi"
check "... signs the file it leads to, as sbattach does" same_bytes "$WORK/links/real.efi" "$WORK/links/sb-real.efi"
check "... and keeps the symlink" test -L "$WORK/links/link.efi"
check "strip in place through a symlink" "$REPROSIGN" strip "$WORK/links/link.efi"
check "... restores the file it leads to" same_bytes "$WORK/links/real.efi" "$efi"
check "... and keeps the symlink" test -L "$WORK/links/link.efi"
check "sign --addcert embeds the extra certificate" bash -c "
    '$REPROSIGN' sign --addcert '$WORK/other.crt' --key '$WORK/db.key' --cert '$WORK/db.crt' '$efi' --output '$WORK/chain.efi' &&
    '$REPROSIGN' detach '$WORK/chain.efi' --output '$WORK/chain.sig' &&
    openssl pkcs7 -inform DER -in '$WORK/chain.sig' -print_certs | grep -c 'subject=' | grep -qx 2"
finish

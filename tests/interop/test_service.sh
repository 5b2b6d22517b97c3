#!/bin/bash
# The signing service on a real local Debian repository: signed requests
# in, a -signed source package out that dpkg-buildpackage builds; the
# transparency log and its proofs; embargo; and the refusals.
. "$TESTS_DIR/lib.sh"
need_fixtures shim
. "$TESTS_DIR/interop/service_lib.sh"
need_tool dpkg-source; need_tool sbverify

repo=$WORK/repo
make_repo "$repo"
write_config main "$repo" ', "embargoed_suites": ["bookworm-embargoed"]'
write_requests "$WORK/main-requests.json" true
state=$WORK/state
out=$WORK/main-out
log=$WORK/main-log
vkey=$state/log.vkey
entries_of() { python3 "$TESTS_DIR/interop/tlog_entries.py" "$1" >"$WORK/entries.jsonl" && echo "$WORK/entries.jsonl"; }

# ---- a pass over the archive's requests ----
check "service init" svc init --state "$state" --config "$WORK/main.json"
check "... makes the log's own key, named <hostname>/reprosign, private" bash -c "
    [ \"\$(stat -c %a '$state/log.key')\" = 600 ] && grep -q '^PRIVATE+KEY+$(hostname)/reprosign+' '$state/log.key' &&
    grep -q '^$(hostname)/reprosign+' '$vkey'"
check "service run --once" svc run --state "$state" --once
check "the first request is published" test "$(status_of "$state" "$id1")" = published
check "its outputs: the .dsc, the .tar.xz and signatures.tar.gz, nothing else" bash -c "
    cd '$out/$id1' && ls | sort | tr '\n' ' ' | grep -qx 'shim-helpers-amd64-signed_1+16.1+2~deb12u1.dsc shim-helpers-amd64-signed_1+16.1+2~deb12u1.tar.xz signatures.tar.gz '"
check "no temporary files in the output directory" bash -c "[ -z \"\$(ls -A '$out' | grep '^\\.')\" ]"
check "the log verifies and holds the two signatures" bash -c "'$REPROSIGN' log verify '$log' --vkey '$vkey' && [ \$(wc -l <'$(entries_of "$log")') = 2 ]"
check "log verify without --vkey is a usage error (exit 2) that says why" bash -c "
    '$REPROSIGN' log verify '$log' 2>'$WORK/novkey.err'; [ \$? = 2 ] && grep -q 'never against key material' '$WORK/novkey.err'"
mkdir -p "$WORK/sigs" && tar -xzf "$out/$id1/signatures.tar.gz" -C "$WORK/sigs"
for f in fbx64 mmx64; do
    check "the published $f.efi signature fits the unsigned binary" \
        "$REPROSIGN" attach "$WORK/sigs/shim-unsigned/usr/lib/shim/$f.efi.sig" "$unsigned_root/usr/lib/shim/$f.efi" --output "$WORK/$f.signed"
    check "... and verifies with the key's certificate" sbverify --cert "$WORK/db.crt" "$WORK/$f.signed"
done
check "each log entry names the request, the file, its digest and the signature's hash" python3 -c "
import hashlib, json
entries = [json.loads(l) for l in open('$(entries_of "$log")')]
assert [e['path'] for e in entries] == ['usr/lib/shim/fbx64.efi', 'usr/lib/shim/mmx64.efi']
for e in entries:
    assert e['request'] == '$id1' and e['package'] == 'shim-unsigned'
    sig = open('$WORK/sigs/shim-unsigned/' + e['path'] + '.sig', 'rb').read()
    assert e['signature_sha256'] == hashlib.sha256(sig).hexdigest()
    assert e['signer_fingerprint'] == '$(openssl x509 -in "$WORK/db.crt" -outform DER | sha256sum | cut -d' ' -f1)'
"

# ---- the -signed source package builds with Debian's tooling ----
if [ "$(id -u)" = 0 ] && command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null; then
    version=$(dpkg-deb -f "$unsigned_deb" Version)
    dpkg -s shim-unsigned 2>/dev/null | grep -qx "Version: $version" || dpkg -i "$unsigned_deb" >/dev/null 2>&1
    check "dpkg-source -x unpacks the published .dsc" bash -c "cd '$WORK' && dpkg-source -x '$out/$id1'/*.dsc stage2 >/dev/null 2>&1"
    check "dpkg-buildpackage builds it" bash -c "cd '$WORK/stage2' && dpkg-buildpackage -us -uc -b >'$WORK/build.log' 2>&1 || { tail -20 '$WORK/build.log'; exit 1; }"
    mkdir -p "$WORK/built" && dpkg-deb -x "$WORK"/shim-helpers-amd64-signed_*.deb "$WORK/built" 2>/dev/null
    check "the built fbx64.efi.signed verifies" sbverify --cert "$WORK/db.crt" "$WORK/built/usr/lib/shim/fbx64.efi.signed"
else
    leave_out "not root or no debhelper: the dpkg-buildpackage steps"
fi

# ---- idempotence ----
cp -a "$out" "$WORK/out-before"
check "a second pass" svc run --state "$state" --once
check "... signs nothing twice: the log is unchanged" test "$(log_size "$log")" = 2
check "... and the outputs are untouched" diff -r "$WORK/out-before" "$out"

# ---- embargo ----
check "the embargoed request is signed and held" test "$(status_of "$state" "$id2")" = held
check "... nothing of it in the output directory" test ! -e "$out/$id2"
check "... nor in the exported log" bash -c "! grep -q 'sec1' '$(entries_of "$log")'"
"$REPROSIGN" log verify "$log" --vkey "$vkey" >/dev/null
size_before=$(log_size "$log")
cp "$log/checkpoint" "$WORK/checkpoint-before"
check "service release" svc release --state "$state" "$id2"
check "... publishes it" test "$(status_of "$state" "$id2")" = published
check "... its outputs appear" bash -c "ls '$out/$id2'/*sec1.dsc '$out/$id2/signatures.tar.gz'"
check "... and its two signatures are appended to the log" test "$(log_size "$log")" = $((size_before + 2))
check "the log verifies after the release" "$REPROSIGN" log verify "$log" --vkey "$vkey"
check "the checkpoint after the release extends the one before (consistency proof)" \
    bash -c "'$REPROSIGN' log consistency '$log' '$WORK/checkpoint-before' --vkey '$vkey' >'$WORK/consistency'"
refuses "releasing a request that is not held" "" svc release --state "$state" "$id2"

# ---- the monitor: the log against what was published, both ways ----
check "log monitor: every logged signature is published and every published one logged" \
    bash -c "'$REPROSIGN' log monitor '$log' --archive '$out' --vkey '$vkey' | tail -1 | grep -q ' 4 archive signatures logged, .* 0 unpublished, 0 unlogged'"
cp -a "$log" "$WORK/mon-log"
echo '{"package":"shim-unsigned","path":"usr/lib/shim/evil.efi","request":"none","signature_sha256":"'"$(printf x | sha256sum | cut -c1-64)"'"}' |
    "$REPROSIGN" log append "$WORK/mon-log" --key "$state/log.key" >/dev/null
check "a logged signature that no published package carries fails the monitor, naming the entry" bash -c "
    ! '$REPROSIGN' log monitor '$WORK/mon-log' --archive '$out' --vkey '$vkey' >'$WORK/mon.out' &&
    grep -q 'entry 4: signature 2d711642.* is carried by no published package' '$WORK/mon.out'"
cp -a "$out" "$WORK/mon-out"
mkdir -p "$WORK/mon-extra/shim-unsigned" && head -c 300 /dev/urandom >"$WORK/mon-extra/shim-unsigned/grubx64.efi.sig"
tar -C "$WORK/mon-extra" -cJf "$WORK/mon-out/$id1/extra.tar.xz" shim-unsigned
check "a published signature that the log lacks fails the monitor, naming the tarball and member" bash -c "
    ! '$REPROSIGN' log monitor '$log' --archive '$WORK/mon-out' --vkey '$vkey' >'$WORK/mon.out' &&
    grep -q 'extra.tar.xz: shim-unsigned/grubx64.efi.sig: a published signature that the log lacks' '$WORK/mon.out'"

# Proofs (c2sp.org/tlog-proof@v1), checked with an independent RFC 9162 verifier.
python3 "$TESTS_DIR/interop/tlog_entries.py" "$log" | split -l 1 -a 1 -d - "$WORK/entry-"
for e in 0 1 2 3; do
    truncate -s -1 "$WORK/entry-$e"
    check "inclusion proof of entry $e checks out (RFC 9162 §2.1.3.2)" \
        bash -c "'$REPROSIGN' log prove '$log' $e >'$WORK/proof-$e' && python3 '$TESTS_DIR/interop/tlog_proof.py' '$WORK/proof-$e' '$WORK/entry-$e'"
    check "... and with reprosign log verify-proof, offline" \
        "$REPROSIGN" log verify-proof --vkey "$vkey" --entry "$WORK/entry-$e" "$WORK/proof-$e"
done
check "prove --entry finds the entry by its bytes" bash -c "'$REPROSIGN' log prove '$log' --entry '$WORK/entry-2' | grep -qx 'index 2'"
refuses "verify-proof rejects another entry" "" "$REPROSIGN" log verify-proof --vkey "$vkey" --entry "$WORK/entry-1" "$WORK/proof-0"
check "... saying so" grep -q "not at index" "$WORK/.err"
check "consistency proof 2 -> 4 checks out (RFC 9162 §2.1.4.2)" \
    bash -c "python3 '$TESTS_DIR/interop/tlog_proof.py' consistency <'$WORK/consistency'"

# ---- a tampered log ----
cp -a "$log" "$WORK/tampered-log"
sed -i 's/fbx64/fbx65/' "$WORK/tampered-log/tile/entries/000.p/4"
refuses "log verify rejects an altered entry, naming it (entry 0)" "" "$REPROSIGN" log verify "$WORK/tampered-log" --vkey "$vkey"
check "... saying so" grep -q "entry 0 does not match" "$WORK/.err"
cp -a "$log" "$WORK/tampered-head"
sed -i '2s/4/5/' "$WORK/tampered-head/checkpoint"
refuses "log verify rejects a checkpoint whose signature does not fit" "" "$REPROSIGN" log verify "$WORK/tampered-head" --vkey "$vkey"
check "... saying so" grep -q "does not verify" "$WORK/.err"
cp -a "$log" "$WORK/extra-entry"
printf '\0\2{}' >>"$WORK/extra-entry/tile/entries/000.p/4"
refuses "log verify rejects entries the checkpoint does not cover" "" "$REPROSIGN" log verify "$WORK/extra-entry" --vkey "$vkey"
check "... saying so" grep -q "after its 4 entries" "$WORK/.err"
"$REPROSIGN" log keygen "$(hostname)/reprosign" --output "$WORK/other-log" >/dev/null
refuses "log verify --vkey pins the log's key" "" "$REPROSIGN" log verify "$log" --vkey "$WORK/other-log.vkey"
check "... saying so" grep -q "no signature by the key\|does not verify" "$WORK/.err"

# ---- refusals: nothing is signed ----
write_config forged "$repo"
write_requests "$WORK/forged-requests.json"
sed -i 's/"bookworm"/"bookworm" /' "$WORK/forged-requests.json"
svc init --state "$WORK/forged-state" --config "$WORK/forged.json"
refuses "requests.json whose OpenPGP signature does not verify" "" svc run --state "$WORK/forged-state" --once
check "... names gpgv" grep -q 'gpgv' "$WORK/.err"
check "... and records no request" bash -c "[ \"\$('$REPROSIGN' service status --state '$WORK/forged-state')\" = 'no requests' ]"

cp -a "$repo" "$WORK/badrepo"
printf 'X' | dd of="$(ls "$WORK"/badrepo/pool/main/s/shim-unsigned_*.deb)" bs=1 seek=3000 conv=notrunc status=none
write_config bad "$WORK/badrepo"
svc init --state "$WORK/bad-state" --config "$WORK/bad.json"
svc run --state "$WORK/bad-state" --once >/dev/null 2>"$WORK/bad.err"
check "a .deb that differs from its Packages entry fails the request" test "$(status_of "$WORK/bad-state" "$id1")" = failed
check "... naming the file and the Packages index" bash -c "'$REPROSIGN' service status --state '$WORK/bad-state' | grep -q 'shim-unsigned_.*does not match the size and SHA-256 in the Packages index'"
check "... signing nothing" test "$(log_size "$WORK/bad-log")" = 0
check "... publishing nothing" bash -c "[ -z \"\$(ls -A '$WORK/bad-out')\" ]"

refuses "service init with a broken configuration" "" bash -c "echo '{\"archive\": \"relative\"}' >'$WORK/broken.json' && '$REPROSIGN' service init --state '$WORK/broken-state' --config '$WORK/broken.json'"
refuses "service run on a directory that is not a state" "" svc run --state "$WORK" --once

# ---- the log's key is its own ----
write_config sbkey "$repo" ", \"log_key\": \"$WORK/db.key\""
refuses "a Secure Boot key as log_key is refused" "$WORK/sbkey-state" svc init --state "$WORK/sbkey-state" --config "$WORK/sbkey.json"
check "... saying why" grep -q 'is a Secure Boot signing key; the log needs its own key' "$WORK/.err"
write_config oldkey "$repo" ", \"log_key\": {\"key\": \"$WORK/db.key\", \"cert\": \"$WORK/db.crt\"}"
refuses "a key and certificate as log_key (the former form) is refused" "$WORK/oldkey-state" svc init --state "$WORK/oldkey-state" --config "$WORK/oldkey.json"
"$REPROSIGN" log keygen archive.example/log --output "$WORK/own-log" >/dev/null
write_config ownkey "$repo" ", \"log_key\": \"$WORK/own-log.key\""
svc init --state "$WORK/ownkey-state" --config "$WORK/ownkey.json"
check "with log_key configured, init makes no key of its own" test ! -e "$WORK/ownkey-state/log.key"
svc run --state "$WORK/ownkey-state" --once >/dev/null 2>&1
check "... and the log's checkpoints are signed with it" bash -c "
    head -1 '$WORK/ownkey-log/checkpoint' | grep -qx archive.example/log && '$REPROSIGN' log verify '$WORK/ownkey-log' --vkey '$WORK/own-log.vkey'"
finish

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

# ---- a pass over the archive's requests ----
check "service init" svc init --state "$state" --config "$WORK/main.json"
check "service run --once" svc run --state "$state" --once
check "the first request is published" test "$(status_of "$state" "$id1")" = published
check "its outputs: the .dsc, the .tar.xz and signatures.tar.xz, nothing else" bash -c "
    cd '$out/$id1' && ls | sort | tr '\n' ' ' | grep -qx 'shim-helpers-amd64-signed_1+16.1+2~deb12u1.dsc shim-helpers-amd64-signed_1+16.1+2~deb12u1.tar.xz signatures.tar.xz '"
check "no temporary files in the output directory" bash -c "[ -z \"\$(ls -A '$out' | grep '^\\.')\" ]"
check "the log verifies and holds the two signatures" bash -c "'$REPROSIGN' log verify '$log' && [ \$(wc -l <'$log/entries.jsonl') = 2 ]"
mkdir -p "$WORK/sigs" && tar -xJf "$out/$id1/signatures.tar.xz" -C "$WORK/sigs"
for f in fbx64 mmx64; do
    check "the published $f.efi signature fits the unsigned binary" \
        "$REPROSIGN" attach "$WORK/sigs/shim-unsigned/usr/lib/shim/$f.efi.sig" "$unsigned_root/usr/lib/shim/$f.efi" --output "$WORK/$f.signed"
    check "... and verifies with the key's certificate" sbverify --cert "$WORK/db.crt" "$WORK/$f.signed"
done
check "each log entry names the request, the file, its digest and the signature's hash" python3 -c "
import hashlib, json
entries = [json.loads(l) for l in open('$log/entries.jsonl')]
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
check "... nor in the exported log" bash -c "! grep -q 'sec1' '$log/entries.jsonl'"
"$REPROSIGN" log verify "$log" >/dev/null
size_before=$(log_size "$log")
check "service release" svc release --state "$state" "$id2"
check "... publishes it" test "$(status_of "$state" "$id2")" = published
check "... its outputs appear" bash -c "ls '$out/$id2'/*sec1.dsc '$out/$id2/signatures.tar.xz'"
check "... and its two signatures are appended to the log" test "$(log_size "$log")" = $((size_before + 2))
check "the log verifies after the release" "$REPROSIGN" log verify "$log"
check "the head after the release extends the one before (consistency proof)" \
    "$REPROSIGN" log consistency "$log" "$size_before" "$((size_before + 2))"
refuses "releasing a request that is not held" "" svc release --state "$state" "$id2"

# Proofs, checked with an independent RFC 9162 verifier.
cat >"$WORK/rfc9162.py" <<'PY'
import hashlib, json, sys
H = lambda *p: hashlib.sha256(b''.join(p)).digest()
def inclusion(d):
    fn, sn, r = d['leaf_index'], d['tree_size'] - 1, bytes.fromhex(d['leaf_hash'])
    assert r == H(b'\0', d['entry'].encode())
    for p in map(bytes.fromhex, d['audit_path']):
        assert sn > 0
        if fn & 1 or fn == sn:
            r = H(b'\1', p, r)
            while not fn & 1 and fn:
                fn >>= 1; sn >>= 1
        else:
            r = H(b'\1', r, p)
        fn >>= 1; sn >>= 1
    assert sn == 0 and r.hex() == d['root']
def consistency(d):
    m, n, proof = d['old_size'], d['new_size'], list(map(bytes.fromhex, d['proof']))
    old, new = bytes.fromhex(d['old_root']), bytes.fromhex(d['new_root'])
    if m == n:
        assert not proof and old == new; return
    if m & (m - 1) == 0:
        proof.insert(0, old)
    fn, sn = m - 1, n - 1
    while fn & 1:
        fn >>= 1; sn >>= 1
    fr = sr = proof[0]
    for c in proof[1:]:
        assert sn > 0
        if fn & 1 or fn == sn:
            fr, sr = H(b'\1', c, fr), H(b'\1', c, sr)
            while not fn & 1 and fn:
                fn >>= 1; sn >>= 1
        else:
            sr = H(b'\1', sr, c)
        fn >>= 1; sn >>= 1
    assert sn == 0 and fr == old and sr == new
d = json.load(sys.stdin)
inclusion(d) if 'leaf_index' in d else consistency(d)
PY
for e in 0 1 2 3; do
    check "inclusion proof of entry $e checks out (RFC 9162 §2.1.3.2)" \
        bash -c "'$REPROSIGN' log prove '$log' $e | python3 '$WORK/rfc9162.py'"
done
check "consistency proof 2 -> 4 checks out (RFC 9162 §2.1.4.2)" \
    bash -c "'$REPROSIGN' log consistency '$log' 2 4 | python3 '$WORK/rfc9162.py'"

# ---- a tampered log ----
cp -a "$log" "$WORK/tampered-log"
python3 - "$WORK/tampered-log/entries.jsonl" <<'PY'
import sys
lines = open(sys.argv[1]).read().split('\n')
lines[2] = lines[2].replace('fbx64', 'fbx65')
open(sys.argv[1], 'w').write('\n'.join(lines))
PY
refuses "log verify rejects an altered entry" "" "$REPROSIGN" log verify "$WORK/tampered-log"
check "... and names it (entry 2)" grep -q 'entry 2 has been altered' "$WORK/.err"
cp -a "$log" "$WORK/tampered-head"
sed -i '1s/"time":[0-9]*/"time":1/' "$WORK/tampered-head/heads.jsonl"
refuses "log verify rejects a head whose signature does not fit" "" "$REPROSIGN" log verify "$WORK/tampered-head"
check "... naming head 0" grep -q 'head 0: the signature does not verify' "$WORK/.err"
cp -a "$log" "$WORK/extra-entry"
tail -1 "$log/entries.jsonl" >>"$WORK/extra-entry/entries.jsonl"
refuses "log verify rejects entries no signed head covers" "" "$REPROSIGN" log verify "$WORK/extra-entry"
make_key other
refuses "log verify --cert pins the log's certificate" "" "$REPROSIGN" log verify "$log" --cert "$WORK/other.crt"

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
finish

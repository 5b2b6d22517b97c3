#!/bin/bash
# A kernel-shaped tree: Debian's vmlinuz and every module of the flavour,
# their signatures stripped, through sign-template and attach-tree. Every
# module signature must equal `sign-file -d` and verify after attaching.
. "$TESTS_DIR/lib.sh"
need_fixtures kernel
signfile=/usr/lib/linux-kbuild-6.1/scripts/sign-file
need_tool "$signfile"; need_tool sbverify

kroot=$(readlink -f "$FIXTURES/kernel")
pkg=$(basename "$kroot")
make_key db
make_key other
export SOURCE_DATE_EPOCH=1700000000

(cd "$kroot" && find boot lib/modules -type f \( -name 'vmlinuz-*' -o -name '*.ko' \) | sort) >"$WORK/files"
# The unsigned tree. Debian's build appended each module's signature to
# the unsigned module, so the module is the bytes before it: one Python
# process cuts them all (an independent reading of the trailer, and ~1,100
# fewer processes, which cost seconds under the sanitizers). reprosign
# strip takes the vmlinuz, and must agree with the cut on a sample.
python3 - "$kroot" "$WORK/pkgs/$pkg" "$WORK/files" <<'PY' >"$WORK/strip.log" 2>&1
import os, struct, sys
src, dst, listing = sys.argv[1:]
MAGIC = b"~Module signature appended~\n"
for f in (l.strip() for l in open(listing)):
    if not f.endswith(".ko"):
        continue
    data = open(os.path.join(src, f), "rb").read()
    if not data.endswith(MAGIC) or len(data) < len(MAGIC) + 12:
        print("not signed: " + f)
        continue
    info = len(data) - len(MAGIC) - 12
    _, _, _, signer_len, key_id_len, sig_len = struct.unpack_from(">BBBBB3xI", data, info)
    end = info - sig_len - signer_len - key_id_len
    if end < 0:
        print("bad trailer: " + f)
        continue
    os.makedirs(os.path.dirname(os.path.join(dst, f)), exist_ok=True)
    with open(os.path.join(dst, f), "wb") as out:
        out.write(data[:end])
PY
while read -r f; do
    case $f in *.ko) continue ;; esac
    mkdir -p "$WORK/pkgs/$pkg/$(dirname "$f")"
    "$REPROSIGN" strip "$kroot/$f" --output "$WORK/pkgs/$pkg/$f" || echo "strip failed: $f"
done <"$WORK/files" >>"$WORK/strip.log" 2>&1
check "every file stripped" test ! -s "$WORK/strip.log"
nmod=$(grep -c '\.ko$' "$WORK/files")
disagree=0 sampled=0
while read -r f; do
    if ! "$REPROSIGN" strip "$kroot/$f" --output "$WORK/strip-sample.ko" ||
        ! same_bytes "$WORK/strip-sample.ko" "$WORK/pkgs/$pkg/$f"; then
        disagree=$((disagree + 1)); echo "differs: $f"
    fi
    sampled=$((sampled + 1))
done < <(grep '\.ko$' "$WORK/files" | awk 'NR % 100 == 1')
check "reprosign strip gives the same bytes on $sampled sampled modules" test "$disagree" -eq 0
python3 - "$WORK/files" "$pkg" >"$WORK/files.json" <<'PY'
import json, sys
files = [l.strip() for l in open(sys.argv[1]) if l.strip()]
print(json.dumps({"packages": {sys.argv[2]: {"trusted_certs": [], "files": [
    {"sig_type": "efi" if "vmlinuz" in f else "linux-module", "file": f} for f in files]}}}))
PY

check "sign-template signs the vmlinuz and $nmod modules" "$REPROSIGN" sign-template --quiet "$WORK/files.json" \
    --packages "$WORK/pkgs" --key "$WORK/db.key" --cert "$WORK/db.crt" --output "$WORK/out"
check "one signature per file" bash -c "[ \$(find '$WORK/out/signatures' -name '*.sig' | wc -l) -eq \$(wc -l <'$WORK/files') ]"

# Every module signature is exactly what sign-file -d writes.
mismatch=0
while read -r f; do
    case $f in *.ko) ;; *) continue ;; esac
    cp "$WORK/pkgs/$pkg/$f" "$WORK/m.ko"
    "$signfile" -d sha256 "$WORK/db.key" "$WORK/db.crt" "$WORK/m.ko"
    cmp -s "$WORK/m.ko.p7s" "$WORK/out/signatures/$pkg/$f.sig" || { mismatch=$((mismatch + 1)); echo "differs: $f"; }
done <"$WORK/files"
check "all $nmod module signatures equal sign-file -d" test "$mismatch" -eq 0

rc=0; "$REPROSIGN" attach-tree --quiet --signatures "$WORK/out/signatures/$pkg" --root "$WORK/pkgs/$pkg" \
    --output "$WORK/nocert" 2>"$WORK/nocert.err" || rc=$?
check "attach-tree without --cert on $nmod module signatures: one usage error (exit 2)" test "$rc" = 2
check "... saying why, once" bash -c "[ \$(grep -c 'carry no certificate: --cert is needed' '$WORK/nocert.err') = 1 ]"
check "... and writes nothing" test ! -e "$WORK/nocert"
check "attach-tree attaches all of them" "$REPROSIGN" attach-tree --quiet --signatures "$WORK/out/signatures/$pkg" \
    --root "$WORK/pkgs/$pkg" --output "$WORK/signed" --cert "$WORK/db.crt"
# Every module at once, as the booted kernel would check them (one process:
# under the sanitizers each start costs more than a module's check); the
# vmlinuz as firmware and sbverify would.
vmlinuz=$(grep -v '\.ko$' "$WORK/files")
"$REPROSIGN" efi siglist --cert "$WORK/db.crt" --output "$WORK/db.esl"
check "sbverify verifies the signed vmlinuz" sbverify --cert "$WORK/db.crt" "$WORK/signed/$vmlinuz"
"$REPROSIGN" chain --db "$WORK/db.esl" "$WORK/signed/$vmlinuz" --modules "$WORK/signed/lib/modules" \
    --kernel-keys "$WORK/db.crt" >"$WORK/chain.out" 2>&1
rc=$?
check "chain: the vmlinuz and every module verify" test "$rc" -eq 0
[ "$rc" -eq 0 ] || grep -v ': OK' "$WORK/chain.out" | head -n 20
check "... all $nmod modules of them, none failed" \
    grep -q "^modules .*: OK, $nmod verified (.builtin_trusted_keys $nmod, .machine 0, .platform 0), 0 failed" "$WORK/chain.out"
check "modinfo reads a signer from every module" \
    bash -c "[ \$(cd '$WORK/signed' && grep '\.ko\$' '$WORK/files' | xargs modinfo -F signer | grep -c 'reprosign test db') -eq $nmod ]"
first=$(grep -m1 '\.ko$' "$WORK/files")
check "reprosign verify verifies a module alone" "$REPROSIGN" verify "$WORK/signed/$first" --cert "$WORK/db.crt"
check "a module signature does not verify with another key" \
    bash -c "! '$REPROSIGN' verify '$WORK/signed/$first' --cert '$WORK/other.crt' >/dev/null 2>&1"
# The signed tree again, in place: every file already carries its
# signature (a module can carry only one), so nothing changes.
cp -a "$WORK/signed" "$WORK/signed.1"
check "attach-tree over the signed tree again, in place" "$REPROSIGN" attach-tree --quiet \
    --signatures "$WORK/out/signatures/$pkg" --root "$WORK/signed" --cert "$WORK/db.crt"
check "... changes nothing" diff -r "$WORK/signed" "$WORK/signed.1"

# One module rebuilt differently: the whole tree is refused, that module named.
cp -a "$WORK/pkgs/$pkg" "$WORK/tampered"
printf 'X' | dd of="$WORK/tampered/$first" bs=1 seek=100 conv=notrunc status=none
"$REPROSIGN" attach-tree --quiet --signatures "$WORK/out/signatures/$pkg" --root "$WORK/tampered" \
    --cert "$WORK/db.crt" 2>"$WORK/tampered.err"
rc=$?
check "attach-tree refuses the tree with one tampered module" test "$rc" -eq 1
check "... naming it" grep -q "$(basename "$first")" "$WORK/tampered.err"
check "... and only it" test "$(grep -c '^reprosign: .*\.ko: ' "$WORK/tampered.err")" -eq 1
check "... leaving every file unsigned" bash -c "! '$REPROSIGN' list '$WORK/tampered/$(grep -m2 '\.ko$' "$WORK/files" | tail -1)' | grep -q 'signature 0'"
finish

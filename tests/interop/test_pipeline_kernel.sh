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
mkdir -p "$WORK/pkgs/$pkg"
while read -r f; do
    mkdir -p "$WORK/pkgs/$pkg/$(dirname "$f")"
    "$REPROSIGN" strip "$kroot/$f" --output "$WORK/pkgs/$pkg/$f" || echo "strip failed: $f"
done <"$WORK/files" >"$WORK/strip.log"
check "every file stripped" test ! -s "$WORK/strip.log"
nmod=$(grep -c '\.ko$' "$WORK/files")
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
bad=0
while read -r f; do
    if [[ $f == *.ko ]]; then
        "$REPROSIGN" verify "$WORK/signed/$f" --cert "$WORK/db.crt" >/dev/null 2>&1 || { bad=$((bad + 1)); echo "fails: $f"; }
    else
        sbverify --cert "$WORK/db.crt" "$WORK/signed/$f" >/dev/null 2>&1 || { bad=$((bad + 1)); echo "fails: $f"; }
    fi
done <"$WORK/files"
check "every signed file verifies" test "$bad" -eq 0
first=$(grep -m1 '\.ko$' "$WORK/files")
check "modinfo reads the signer" bash -c "modinfo -F signer '$WORK/signed/$first' | grep -q 'reprosign test db'"
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

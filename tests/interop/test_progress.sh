#!/bin/bash
# Progress on Debian's real shim-helpers-amd64-signed-template: on a
# terminal (a pty) sign-template and attach-tree redraw one line in place
# and end with the summary; into a file, only the summary line, no \r; with
# --quiet (or -q), nothing. The summary's bytes are those hashed: the two
# images, once each. No assertion depends on how long a run takes.
. "$TESTS_DIR/lib.sh"
need_fixtures shim
need_tool python3; need_tool dpkg-source

debs=$FIXTURES/debs
template_deb=$(bash "$TESTS_DIR/tools/newest-deb.sh" "$debs" shim-helpers-amd64-signed-template)
unsigned_root=$FIXTURES/root/shim-unsigned
make_key db
export SOURCE_DATE_EPOCH=1700000000
mkdir -p "$WORK/pkgs" && cp "$debs"/shim-unsigned_*.deb "$WORK/pkgs/"
sign_template() { "$REPROSIGN" sign-template "$template_deb" --packages "$WORK/pkgs" --key "$WORK/db.key" --cert "$WORK/db.crt" "$@"; }

# What the two images weigh, as the summary writes it ("993.9 kB").
kb=$(python3 -c "import os,sys; print('%.1f kB' % (sum(os.path.getsize(f) for f in sys.argv[1:]) / 1000))" \
    "$unsigned_root/usr/lib/shim/fbx64.efi" "$unsigned_root/usr/lib/shim/mmx64.efi")
summary() {  # summary COMMAND VERB: the summary line's pattern
    echo "reprosign $1: 2 files, $kb hashed in ([0-9]+\.[0-9] s|[0-9:]+) \([0-9]+\.[0-9] MB/s\), 2 signatures $2"
}
progress='reprosign sign-template: hashed [12]/2 files, [0-2]/2 signatures, [0-9]+\.[0-9] MB/s, ETA ([0-9]+:[0-9]{2}|--:--)'

# ---- on a terminal ----
rc=0
python3 "$TESTS_DIR/tools/on_pty.py" "$WORK/tty.txt" "$REPROSIGN" sign-template "$template_deb" --packages "$WORK/pkgs" \
    --key "$WORK/db.key" --cert "$WORK/db.crt" --output "$WORK/tty" || rc=$?
check "sign-template on a terminal succeeds" test "$rc" = 0
# Each redraw goes back to the line's start and clears it; the line is
# one line (no newline) until the summary replaces it, which ends the run.
check "... redraws the progress line in place (\\r, cleared), with files, MB/s and an ETA" python3 - "$WORK/tty.txt" "$progress" <<'PY'
import re, sys
text = open(sys.argv[1], "rb").read().decode()
draws = text.split("\r\x1b[K")
assert draws[0] == "", repr(text)
assert len(draws) >= 3, repr(text)             # at least one progress line, then the summary
for d in draws[1:-1]:
    assert re.fullmatch(sys.argv[2], d), repr(d)
PY
check "... and ends with the summary, the one line with a newline" python3 - "$WORK/tty.txt" "$(summary sign-template made)" <<'PY'
import re, sys
text = open(sys.argv[1], "rb").read().decode()
last = text.split("\r\x1b[K")[-1]
assert re.fullmatch(sys.argv[2] + "\r\n", last), repr(last)   # the pty writes \n as \r\n
assert text.count("\n") == 1, repr(text)
PY
rc=0
python3 "$TESTS_DIR/tools/on_pty.py" "$WORK/attach.txt" "$REPROSIGN" attach-tree --signatures "$WORK/tty/signatures/shim-unsigned" \
    --root "$unsigned_root" --output "$WORK/signed" || rc=$?
check "attach-tree on a terminal succeeds" test "$rc" = 0
check "... redraws in place and ends with its summary: signatures attached" python3 - "$WORK/attach.txt" "$(summary attach-tree attached)" <<'PY'
import re, sys
text = open(sys.argv[1], "rb").read().decode()
draws = text.split("\r\x1b[K")
assert len(draws) >= 3 and draws[0] == "", repr(text)
for d in draws[1:-1]:
    assert re.fullmatch(r"reprosign attach-tree: hashed [12]/2 files, [0-2]/2 signatures, .* MB/s, ETA .*", d), repr(d)
assert re.fullmatch(sys.argv[2] + "\r\n", draws[-1]), repr(draws[-1])
PY

# ---- not on a terminal: a short run prints the summary alone ----
rc=0
sign_template --output "$WORK/file" 2>"$WORK/file.err" || rc=$?
check "sign-template into a file succeeds" test "$rc" = 0
check "... prints only the summary line" grep -Exq "$(summary sign-template made)" "$WORK/file.err"
check "... one line, no \\r and no escape" bash -c "[ \$(wc -l <'$WORK/file.err') = 1 ] && ! grep -q \$'[\\r\\033]' '$WORK/file.err'"
check "attach-tree into a file prints only its summary line" bash -c "
    '$REPROSIGN' attach-tree --signatures '$WORK/file/signatures/shim-unsigned' --root '$unsigned_root' --output '$WORK/signed2' \
        2>'$WORK/attach.err' && [ \$(wc -l <'$WORK/attach.err') = 1 ] && grep -Exq '$(summary attach-tree attached)' '$WORK/attach.err'"
check "the signatures are those of the terminal's run" cmp "$WORK/tty/signatures.tar.gz" "$WORK/file/signatures.tar.gz"

# A terminal that cannot clear a line (an Emacs shell buffer) gets plain lines.
rc=0
TERM=dumb python3 "$TESTS_DIR/tools/on_pty.py" "$WORK/dumb.txt" "$REPROSIGN" sign-template "$template_deb" --packages "$WORK/pkgs" \
    --key "$WORK/db.key" --cert "$WORK/db.crt" --output "$WORK/dumb" || rc=$?
check "sign-template with TERM=dumb: the summary alone, no \\r\\033[K" bash -c "
    [ $rc = 0 ] && [ \$(wc -l <'$WORK/dumb.txt') = 1 ] && ! grep -q \$'\\033' '$WORK/dumb.txt' &&
    tr -d '\\r' <'$WORK/dumb.txt' | grep -Exq '$(summary sign-template made)'"

# ---- quiet ----
for q in --quiet -q; do
    rc=0
    python3 "$TESTS_DIR/tools/on_pty.py" "$WORK/quiet.txt" "$REPROSIGN" sign-template "$template_deb" --packages "$WORK/pkgs" \
        --key "$WORK/db.key" --cert "$WORK/db.crt" --output "$WORK/quiet$q" $q || rc=$?
    check "sign-template $q on a terminal: succeeds and prints nothing" bash -c "[ $rc = 0 ] && [ ! -s '$WORK/quiet.txt' ]"
    check "attach-tree $q into a file: prints nothing" bash -c "
        '$REPROSIGN' attach-tree $q --signatures '$WORK/file/signatures/shim-unsigned' --root '$unsigned_root' \
            --output '$WORK/signed$q' 2>'$WORK/quiet.err' && [ ! -s '$WORK/quiet.err' ]"
done

# ---- a run that fails ends with its error, not a summary ----
mkdir -p "$WORK/bad-pkgs/shim-unsigned/usr/lib/shim"
cp "$unsigned_root/usr/lib/shim/fbx64.efi" "$WORK/bad-pkgs/shim-unsigned/usr/lib/shim/"
echo 'not an EFI image' >"$WORK/bad-pkgs/shim-unsigned/usr/lib/shim/mmx64.efi"
rc=0
python3 "$TESTS_DIR/tools/on_pty.py" "$WORK/fail.txt" "$REPROSIGN" sign-template "$template_deb" --packages "$WORK/bad-pkgs" \
    --key "$WORK/db.key" --cert "$WORK/db.crt" --output "$WORK/fail" --jobs 1 || rc=$?
check "a file that is no image (the second) fails the run" test "$rc" = 1
check "... whose last line is the error, after the cleared progress line" python3 - "$WORK/fail.txt" <<'PY'
import sys
text = open(sys.argv[1], "rb").read().decode()
assert "hashed in" not in text, repr(text)
draws = text.split("\r\x1b[K")
assert len(draws) == 3 and draws[1].startswith("reprosign sign-template: hashed 1/2 files"), repr(text)
assert draws[2].startswith("reprosign: ") and "mmx64.efi" in draws[2] and draws[2].count("\n") == 1, repr(text)
PY
finish

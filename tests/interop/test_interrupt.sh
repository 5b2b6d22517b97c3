#!/bin/bash
# SIGINT and SIGTERM in the middle of a batch (sign-template over a large
# tree, attach-tree in place): the process dies by the signal, its inputs
# are untouched, and nothing is left behind: no OUTDIR, no hidden
# .OUTDIR.partial-* work directory, no .FILE.XXXXXX temporary.
# kill -9 cannot be caught: OUTDIR still never appears (it is renamed into
# place only when complete), but the hidden work directory stays behind.
. "$TESTS_DIR/lib.sh"
need_tool python3
make_key db
export SOURCE_DATE_EPOCH=1700000000
nfiles=${INTERRUPT_FILES:-1500}
pkg=big-unsigned

# A large tree of small EFI images: signing, not I/O, takes the time, so
# the batch runs long enough to be caught in the middle on any machine.
python3 "$TESTS_DIR/tools/mkpe.py" "$WORK/one.efi" --sections 1 --section-size 512
python3 - "$WORK" "$pkg" "$nfiles" <<'PY'
import json, os, sys
work, pkg, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(os.path.join(work, "one.efi"), "rb").read()
files = []
for i in range(n):
    rel = "usr/lib/big/d%02d/f%04d.efi" % (i % 16, i)
    os.makedirs(os.path.join(work, "pkgs", pkg, os.path.dirname(rel)), exist_ok=True)
    with open(os.path.join(work, "pkgs", pkg, rel), "wb") as f:
        f.write(data + i.to_bytes(8, "little"))   # distinct files, still 8-byte aligned
    files.append({"sig_type": "efi", "file": rel})
json.dump({pkg: {"files": files}}, open(os.path.join(work, "files.json"), "w"))
PY

sums() { (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum); }
leftovers() {  # hidden work directories and temporaries anywhere under $WORK
    find "$WORK" \( -name '.*.partial-*' -o -name '.*.??????' \) -print
}
sums "$WORK/pkgs" >"$WORK/pkgs.sums"
sums "$WORK/pkgs/$pkg" >"$WORK/pkg.sums"

# Waits until CONDITION (a shell command) holds, or the process ends.
wait_for() {  # wait_for PID CONDITION
    local pid=$1 cond=$2 i
    for ((i = 0; i < 2000; i++)); do
        eval "$cond" && return 0
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.01
    done
    return 1
}

# interrupt SIGNAL NAME CONDITION command...: starts the command, sends the
# signal once CONDITION holds (mid-batch), and returns its exit status.
interrupt() {
    local sig=$1 name=$2 cond=$3; shift 3
    "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
    disown -h
    local pid=$! rc=0
    if ! wait_for "$pid" "$cond"; then
        fail "$name: the batch ended before it could be interrupted (raise INTERRUPT_FILES)"
    fi
    kill -s "$sig" "$pid" 2>/dev/null
    wait "$pid" || rc=$?
    return "$rc"
}

signed_some() { [ "$(find "$WORK" -path "$WORK/.out*.partial-*" -name '*.sig' 2>/dev/null | head -n 20 | wc -l)" -ge 20 ]; }

# The signal must reach reprosign itself, not a shell function around it.
st=("$REPROSIGN" sign-template --quiet files.json --packages pkgs --key db.key --cert db.crt --jobs 1)
cd "$WORK" || exit 1
for sig in INT TERM; do
    num=$(kill -l "$sig")
    interrupt "$sig" "st-$sig" signed_some "${st[@]}" --output "$WORK/out-$sig"
    rc=$?
    check "sign-template, SIG$sig mid-batch: dies by the signal (status $rc)" test "$rc" -eq $((128 + num))
    check "... no OUTDIR" test ! -e "$WORK/out-$sig"
    check "... no work directory or temporary file left" test -z "$(leftovers)"
    check "... inputs untouched" bash -c "diff <(cd '$WORK/pkgs' && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) '$WORK/pkgs.sums'"
done

interrupt KILL st-KILL signed_some "${st[@]}" --output "$WORK/out-KILL"
rc=$?
check "sign-template, SIGKILL mid-batch: killed (status $rc)" test "$rc" -eq 137
check "... no OUTDIR: the work directory is renamed into place only when complete" test ! -e "$WORK/out-KILL"
check "... what remains is the hidden work directory, which no later run mistakes for output" \
    bash -c "ls -d '$WORK'/.out-KILL.partial-* >/dev/null"
rm -rf "$WORK"/.out-KILL.partial-*

# attach-tree in place, over the signatures of a complete run.
check "sign-template completes" "${st[@]}" --output "$WORK/out"
sigs=$WORK/out/signatures/$pkg
sums "$sigs" >"$WORK/sigs.sums"
temps_exist() { [ -n "$(find "$WORK/tree" -name '.*.??????' -print -quit)" ]; }
at=("$REPROSIGN" attach-tree --quiet --jobs 1 --signatures "$sigs" --root "$WORK/tree")
for sig in INT TERM; do
    num=$(kill -l "$sig")
    rm -rf "$WORK/tree" && cp -a "$WORK/pkgs/$pkg" "$WORK/tree"
    interrupt "$sig" "at-$sig" temps_exist "${at[@]}"
    rc=$?
    check "attach-tree in place, SIG$sig mid-batch: dies by the signal (status $rc)" test "$rc" -eq $((128 + num))
    check "... every file untouched" bash -c "diff <(cd '$WORK/tree' && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) $WORK/pkg.sums"
    check "... no temporary file left" test -z "$(leftovers)"
    check "... signatures untouched" bash -c "diff <(cd '$sigs' && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) '$WORK/sigs.sums'"
done
# Temporaries while they are being written, caught with SIGSTOP. They
# are private (0600) until they are renamed into place.
rm -rf "$WORK/tree" && cp -a "$WORK/pkgs/$pkg" "$WORK/tree"
"${at[@]}" >/dev/null 2>&1 &
pid=$!
if wait_for "$pid" temps_exist; then
    kill -STOP "$pid"
    modes=$(find "$WORK/tree" -name '.*.??????' -printf '%m\n' | sort -u | tr '\n' ' ')
    kill -CONT "$pid"
    check "temporaries are 0600 while being written (saw: $modes)" test "$modes" = "600 "
fi
kill -TERM "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
rm -rf "$WORK/tree" && cp -a "$WORK/pkgs/$pkg" "$WORK/tree"
check "attach-tree in place completes" "${at[@]}"
check "... and signs every file" bash -c "[ \$(find '$WORK/tree' -name '*.efi' | wc -l) -eq $nfiles ] &&
    '$REPROSIGN' verify --cert '$WORK/db.crt' '$WORK/tree/usr/lib/big/d00/f0000.efi' >/dev/null"
finish

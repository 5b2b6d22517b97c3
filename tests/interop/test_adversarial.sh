#!/bin/bash
# ctest-timeout: 2400
# Hundreds of generated malformed inputs (tests/tools/adversarial.py), every
# command that reads them, and four rules for every run:
#   - it ends by itself within 10 s (ADVERSARIAL_TIMEOUT: scripts/valgrind.sh
#     allows more, as memcheck runs it tens of times slower), with status
#     0, 1 or 2 (never a signal);
#   - status 1 comes with one 'reprosign: ' line on stderr;
#   - it writes nothing but its output (the whole work tree is compared);
#   - a failed run leaves no output and no temporary file.
# The seed makes the inputs reproducible: ADVERSARIAL_SEED=N to vary them.
# The kernel-module cases use a real module when the kernel fixtures have
# been fetched (scripts/test.sh does so first); this test never downloads.
. "$TESTS_DIR/lib.sh"
need_tool python3
need_tool timeout
seed=${ADVERSARIAL_SEED:-8}
RUN_TIMEOUT=${ADVERSARIAL_TIMEOUT:-10}
export SOURCE_DATE_EPOCH=1700000000
make_key db

# ---- seeds: one valid input of every format ----
python3 "$TESTS_DIR/tools/mkpe.py" "$WORK/good.efi"
"$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK/good.efi" --output "$WORK/signed.efi"
"$REPROSIGN" detach "$WORK/signed.efi" --output "$WORK/good.sig"
"$REPROSIGN" efi siglist --cert "$WORK/db.crt" --output "$WORK/db.esl"
"$REPROSIGN" efi sign-var --name db --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK/db.esl" --output "$WORK/db.auth"
vars_args=()
for t in /usr/share/OVMF/OVMF_VARS_4M.fd /usr/share/OVMF/OVMF_VARS.fd; do
    [ -f "$t" ] || continue
    "$REPROSIGN" efi enroll --vars "$t" --pk "$WORK/db.crt" --kek "$WORK/db.crt" --db "$WORK/db.crt" \
        --output "$WORK/enrolled.fd" && vars_args=(--vars "$WORK/enrolled.fd")
    break
done
module_args=()
mod=$(find "$FIXTURES/kernel/lib/modules" -name '*.ko' -size -24k -size +8k 2>/dev/null | LC_ALL=C sort | head -n 1)
if [ -n "$mod" ]; then
    cp "$mod" "$WORK/signed.ko"
    "$REPROSIGN" strip "$WORK/signed.ko" --output "$WORK/unsigned.ko"
    "$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK/unsigned.ko" --output "$WORK/ours.ko"
    "$REPROSIGN" detach "$WORK/ours.ko" --output "$WORK/mod.sig"
    module_args=(--module "$WORK/ours.ko")
else
    leave_out "no kernel fixtures: the kernel-module cases"
fi
check "the seeds are valid" test -s "$WORK/good.sig" -a -s "$WORK/db.auth"

cases=$WORK/cases
python3 "$TESTS_DIR/tools/adversarial.py" "$cases" --seed "$seed" --pe "$WORK/good.efi" \
    --signed-pe "$WORK/signed.efi" --sig "$WORK/good.sig" --esl "$WORK/db.esl" --auth "$WORK/db.auth" \
    "${vars_args[@]}" "${module_args[@]}" >"$WORK/generated"
total=$(head -n 1 "$WORK/generated")
check "generated $total malformed inputs (seed $seed): $(tail -n +2 "$WORK/generated" | tr -s ' \n' ' ')" \
    test "$total" -ge 300

# ---- the sandbox ----
# Commands run in $BOX, four levels below $SB, with relative paths, so a
# '..' that escapes lands inside $SB where the comparison sees it.
SB=$WORK/sb
BOX=$SB/d1/d2/d3/box
RUNS=0
BAD=0
declare -A KIND_RUNS

snapshot() {  # everything under $WORK but the inputs: type, path, mode, and a file's size and mtime
    find "$WORK" -path "$cases" -prune -o -path "$WORK/.run.*" -prune -o \
        -type d -printf '%y %P %m\n' -o -printf '%y %P %m %s %T@\n' | LC_ALL=C sort
}

bad() {
    BAD=$((BAD + 1))
    [ "$BAD" -le 40 ] && { echo "FAIL - $*"; sed 's/^/    /' "$WORK/.run.err" | head -n 5; }
}

# adv KIND CASE OUTPUT ONE_LINE command...: one run, checked against the
# rules. OUTPUT (relative to $BOX, "" for none) may appear on success only.
# ONE_LINE is 0 for attach-tree, which reports every file that fails.
adv() {
    local kind=$1 name=$2 out=$3 one=$4; shift 4
    local rc=0 before after lines
    before=${LAST_SNAPSHOT:-$(snapshot)}
    [ -n "${ADVERSARIAL_DEBUG:-}" ] && echo "run: $*" >&2
    # Thousands of runs: the checks below use no process of their own, and
    # the subshell execs timeout, as process creation is most of a run's cost.
    (cd "$BOX" && TMPDIR=$BOX exec timeout -k 2 "$RUN_TIMEOUT" "$@" >"$WORK/.run.out" 2>"$WORK/.run.err") || rc=$?
    RUNS=$((RUNS + 1))
    KIND_RUNS[$kind]=$((${KIND_RUNS[$kind]:-0} + 1))
    local what="$kind/$name: ${*:1:2}"
    case $rc in
    0 | 1 | 2) ;;
    124 | 137) bad "$what: timed out"; rc=1 ;;
    *) bad "$what: exit status $rc (signal $((rc - 128)))"; rc=1 ;;
    esac
    if [ "$rc" -eq 1 ]; then
        local err="" newlines line foreign=0
        IFS= read -r -d '' err <"$WORK/.run.err" || true
        newlines=${err//[!$'\n']/}
        lines=${#newlines}   # as wc -l counts: a last line without its newline is not a line
        while IFS= read -r line; do [[ $line == 'reprosign: '* ]] || foreign=1; done <<<"${err%$'\n'}"
        if [ "$foreign" = 1 ] || [ "$lines" -eq 0 ] || { [ "$one" = 1 ] && [ "$lines" -ne 1 ]; }; then
            bad "$what: status 1 without exactly one 'reprosign: ' line"
        fi
    fi
    if [ "$rc" -eq 0 ] && [ -n "$out" ]; then
        rm -rf "${BOX:?}/$out"
    fi
    after=$(snapshot)
    LAST_SNAPSHOT=$after   # the next run's "before", unless the tree is reset
    if [ "$before" != "$after" ]; then
        bad "$what: status $rc, and the tree changed: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | head -n 3 | tr '\n' ' ')"
        setup_box "$CURRENT"
    fi
}

setup_box() {  # a fresh sandbox holding the case (file or directory) as "in"
    CURRENT=$1
    LAST_SNAPSHOT=
    rm -rf "$SB"
    mkdir -p "$BOX"
    cp -r "$1" "$BOX/in"
    local seeds=("$WORK/good.efi" "$WORK/good.sig" "$WORK/db.key" "$WORK/db.crt" "$WORK/db.esl" "$WORK/db.auth")
    [ -e "$WORK/enrolled.fd" ] && seeds+=("$WORK/enrolled.fd")
    [ -e "$WORK/unsigned.ko" ] && seeds+=("$WORK/unsigned.ko" "$WORK/mod.sig")
    cp "${seeds[@]}" "$BOX/"
}

K=(--key db.key --cert db.crt)
R=$REPROSIGN

# ---- every command on every input ----
only=${ADVERSARIAL_ONLY:-pe module sig json deb efi}   # to rerun one kind while debugging
want() { [[ " $only " == *" $1 "* ]]; }

want pe && for f in "$cases"/pe/*; do
    n=$(basename "$f"); setup_box "$f"
    adv pe "$n" "" 1 "$R" list in
    adv pe "$n" "" 1 "$R" digest in
    adv pe "$n" "" 1 "$R" verify in --cert db.crt
    adv pe "$n" "" 1 "$R" verify in --db db.esl --json
    adv pe "$n" out.sig 1 "$R" detach in --output out.sig
    adv pe "$n" out.efi 1 "$R" strip in --output out.efi
    adv pe "$n" out.efi 1 "$R" attach good.sig in --output out.efi
    adv pe "$n" out.efi 1 "$R" sign "${K[@]}" in --output out.efi
    adv pe "$n" "" 1 "$R" sbat in
done
want module && for f in "$cases"/module/*; do
    [ -e "$f" ] || continue
    n=$(basename "$f"); setup_box "$f"
    adv module "$n" "" 1 "$R" list in
    adv module "$n" "" 1 "$R" digest in
    adv module "$n" "" 1 "$R" verify in --cert db.crt
    adv module "$n" out.sig 1 "$R" detach in --output out.sig
    adv module "$n" out.ko 1 "$R" strip in --output out.ko
    adv module "$n" out.ko 1 "$R" attach mod.sig in --cert db.crt --output out.ko
    adv module "$n" out.ko 1 "$R" sign "${K[@]}" in --output out.ko
done
want sig && for f in "$cases"/sig/*; do
    n=$(basename "$f"); setup_box "$f"
    mkdir -p "$BOX/sigs/usr" "$BOX/root/usr" && cp "$f" "$BOX/sigs/usr/good.efi.sig" && cp "$WORK/good.efi" "$BOX/root/usr/"
    adv sig "$n" "" 1 "$R" list in
    adv sig "$n" out.efi 1 "$R" attach in good.efi --output out.efi
    [ -e "$BOX/unsigned.ko" ] && adv sig "$n" out.ko 1 "$R" attach in unsigned.ko --cert db.crt --output out.ko
    adv sig "$n" outroot 0 "$R" attach-tree --quiet --signatures sigs --root root --output outroot
done
mkdir -p "$WORK/pkgroot/shim-unsigned/usr/lib/shim" && cp "$WORK/good.efi" "$WORK/pkgroot/shim-unsigned/usr/lib/shim/"
want json && for f in "$cases"/json/*; do
    n=$(basename "$f"); setup_box "$f"
    cp -r "$WORK/pkgroot" "$BOX/pkgs"
    adv json "$n" outdir 1 "$R" sign-template --quiet in --packages pkgs "${K[@]}" --output outdir
done
want deb && for d in "$cases"/deb/*; do
    n=$(basename "$d"); setup_box "$d"
    t=$(cd "$d" && echo template.*)
    adv deb "$n" outdir 1 "$R" sign-template --quiet "in/$t" --packages in/pkgs "${K[@]}" --output outdir
done
want efi && for f in "$cases"/efi/*; do
    n=$(basename "$f"); setup_box "$f"
    adv efi "$n" "" 1 "$R" efi list in
    adv efi "$n" "" 1 "$R" efi list in --json
    case $n in
    *.esl)
        adv efi "$n" "" 1 "$R" verify good.efi --db in
        adv efi "$n" "" 1 "$R" chain --db in good.efi ;;
    *.auth)
        [ -e "$BOX/enrolled.fd" ] && adv efi "$n" out.fd 1 "$R" efi apply --vars enrolled.fd --name db in --output out.fd ;;
    *.fd)
        adv efi "$n" "" 1 "$R" efi list --vars in --all --json
        adv efi "$n" out.esl 1 "$R" efi db --vars in --output out.esl
        adv efi "$n" "" 1 "$R" verify good.efi --vars in
        adv efi "$n" out.fd 1 "$R" efi apply --vars in --name db db.auth --output out.fd ;;
    esac
done

summary=""
for k in "${!KIND_RUNS[@]}"; do summary+=" $k:${KIND_RUNS[$k]}"; done
check "$RUNS runs ($summary ): no crash, no hang, one-line errors, nothing written but the output" test "$BAD" -eq 0
check "nothing escaped to absolute paths" bash -c "[ ! -e /tmp/evil ] && [ ! -e /evil ]"
finish

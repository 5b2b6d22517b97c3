#!/bin/bash
# The transparency log against an implementation that is not ours: Go's
# golang.org/x/mod/sumdb/tlog and note (tests/tlogcheck). Go checks our
# checkpoints, recomputes every tile from the entries and finds each full
# tile's hash in its parent, and checks our proofs; reprosign checks logs,
# checkpoints and proofs that Go made. Sizes give partial tiles at every
# level: 1, 255, 256, 257, 65536, 65537.
. "$TESTS_DIR/lib.sh"
. "$TESTS_DIR/interop/tlog_lib.sh"

"$REPROSIGN" log keygen example.org/reprosign --output "$WORK/log" >/dev/null
check "keygen: the signer key is private, in the note signer-key format" bash -c "
    [ \"\$(stat -c %a '$WORK/log.key')\" = 600 ] && grep -Eq '^PRIVATE\+KEY\+example\.org/reprosign\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$' '$WORK/log.key' &&
    grep -Eq '^example\.org/reprosign\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$' '$WORK/log.vkey'"
refuses "keygen never overwrites a key" "" "$REPROSIGN" log keygen example.org/reprosign --output "$WORK/log"

for n in 1 255 256 257 65536 65537; do
    d=$WORK/L$n half=$((n / 2))
    # Two appends, with the second's batches of 7 or 1000, so a checkpoint
    # falls inside tiles and the old one is there for consistency.
    if [ "$half" -gt 0 ]; then
        entries "$half" 0 | "$REPROSIGN" log append "$d" --key "$WORK/log.key" --batch 1000 >/dev/null
        cp "$d/checkpoint" "$WORK/old-$n"
    fi
    batch=$([ "$n" -lt 1000 ] && echo 7 || echo 1000)
    entries $((n - half)) "$half" | "$REPROSIGN" log append "$d" --key "$WORK/log.key" --batch "$batch" >/dev/null
    check "$n entries: reprosign log verify" "$REPROSIGN" log verify "$d" --vkey "$WORK/log.vkey"
    check "$n entries: Go verifies the checkpoint, every tile from the entries, each full tile in its parent" \
        tlogcheck verify "$d" "$WORK/log.vkey"
    entries "$n" 0 >"$WORK/all"
    for k in 0 "$half" $((n - 1)); do
        sed -n "$((k + 1))p" "$WORK/all" | tr -d '\n' >"$WORK/entry"
        "$REPROSIGN" log prove "$d" "$k" >"$WORK/proof"
        check "$n entries: Go checks reprosign's proof of entry $k" tlogcheck proof "$WORK/proof" "$WORK/entry" "$WORK/log.vkey"
        check "... and prove --entry finds it" bash -c "'$REPROSIGN' log prove '$d' --entry '$WORK/entry' | cmp -s - '$WORK/proof'"
    done
    if [ "$half" -gt 0 ]; then
        check "$n entries: Go checks reprosign's consistency proof from $half" bash -c "
            '$REPROSIGN' log consistency '$d' '$WORK/old-$n' --vkey '$WORK/log.vkey' |
            '$WORK/tlogcheck' consistency '$WORK/old-$n' '$d/checkpoint' '$WORK/log.vkey'"
    fi
    # And the other way round: a log made by Go alone.
    g=$WORK/go$n
    tlogcheck make "$g" "$n"
    check "$n entries made by Go: reprosign log verify" "$REPROSIGN" log verify "$g/log" --vkey "$g/vkey"
    for k in 0 "$half" $((n - 1)); do
        check "... reprosign verify-proof checks Go's proof of entry $k" \
            "$REPROSIGN" log verify-proof --vkey "$g/vkey" --entry "$g/entry-$k" "$g/proof-$k"
        check "... and reprosign's own proof from Go's tiles is byte-identical" \
            bash -c "'$REPROSIGN' log prove '$g/log' $k | cmp -s - '$g/proof-$k'"
    done
    [ "$half" -gt 0 ] && check "... reprosign checks that Go's log extends Go's older checkpoint" \
        "$REPROSIGN" log consistency "$g/log" "$g/old-checkpoint" --vkey "$g/vkey"
    [ "$n" -ge 65536 ] && rm -rf "$d" "$g"
done
finish

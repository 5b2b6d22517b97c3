#!/bin/bash
# Witnesses (c2sp.org/tlog-cosignature): a witness cosigns the log's
# checkpoint only once it has checked the log extends what it saw before;
# log verify and verify-proof count valid cosignatures against
# --min-witnesses, each key once. And the service's log key: never a Secure Boot key.
. "$TESTS_DIR/lib.sh"
. "$TESTS_DIR/interop/tlog_lib.sh"

R=$REPROSIGN
$R log keygen example.org/reprosign --output "$WORK/log" >/dev/null
for w in w1 w2 w3; do $R log keygen "$w.example" --cosigner --output "$WORK/$w" >/dev/null; done
d=$WORK/L
entries 300 0 | $R log append "$d" --key "$WORK/log.key" --batch 100 >/dev/null
cp "$d/checkpoint" "$WORK/seen"
entries 300 300 | $R log append "$d" --key "$WORK/log.key" --batch 100 >/dev/null

check "w1 cosigns after checking consistency with what it saw" bash -c "
    '$R' log cosign '$d' '$WORK/seen' --vkey '$WORK/log.vkey' --key '$WORK/w1.key' >'$WORK/cp1'"
check "w2 cosigns the same checkpoint" bash -c "
    '$R' log cosign '$d' '$WORK/seen' --vkey '$WORK/log.vkey' --key '$WORK/w2.key' >'$WORK/cp2'"
# The log publishes its checkpoint with the cosignatures appended.
{ cat "$WORK/cp1"; tail -n 1 "$WORK/cp2"; } >"$d/checkpoint.new" && mv "$d/checkpoint.new" "$d/checkpoint"
entries 1 5 | tr -d '\n' >"$WORK/entry5"
$R log prove "$d" 5 >"$WORK/proof5"
check "log verify with 2 of 3 witnesses required" \
    $R log verify "$d" --vkey "$WORK/log.vkey" --witness "$WORK/w1.vkey" --witness "$WORK/w2.vkey" --witness "$WORK/w3.vkey" --min-witnesses 2
refuses "... 3 of 3 required: refused" "" \
    $R log verify "$d" --vkey "$WORK/log.vkey" --witness "$WORK/w1.vkey" --witness "$WORK/w2.vkey" --witness "$WORK/w3.vkey" --min-witnesses 3
check "... saying how many" grep -q "2 valid cosignatures of the 3 required" "$WORK/.err"
# Witnesses are counted by distinct key material (#46): one witness given
# twice, or its .vkey copied under another file name, is one.
refuses "one witness given twice does not make 2 of 2" "" \
    $R log verify "$d" --vkey "$WORK/log.vkey" --witness "$WORK/w1.vkey" --witness "$WORK/w1.vkey" --min-witnesses 2
check "... it counts once" grep -q "1 valid cosignatures of the 2 required (by distinct witness keys)" "$WORK/.err"
cp "$WORK/w1.vkey" "$WORK/w1-copy.vkey"
refuses "nor does a copy of its .vkey under another name" "" \
    $R log verify "$d" --vkey "$WORK/log.vkey" --witness "$WORK/w1.vkey" --witness "$WORK/w1-copy.vkey" --min-witnesses 2
refuses "... in verify-proof either" "" \
    $R log verify-proof --vkey "$WORK/log.vkey" --witness "$WORK/w1.vkey" --witness "$WORK/w1-copy.vkey" --min-witnesses 2 \
    --entry "$WORK/entry5" "$WORK/proof5"
check "Go's note package still opens the cosigned checkpoint with the log's key" tlogcheck verify "$d" "$WORK/log.vkey"
check "a proof carries the cosigned checkpoint: verify-proof --min-witnesses 2" \
    $R log verify-proof --vkey "$WORK/log.vkey" --witness "$WORK/w1.vkey" --witness "$WORK/w2.vkey" --min-witnesses 2 --entry "$WORK/entry5" "$WORK/proof5"
refuses "a log key given as a witness key is refused" "" \
    $R log verify "$d" --vkey "$WORK/log.vkey" --witness "$WORK/log.vkey" --min-witnesses 1
python3 -c "
import sys
p = sys.argv[1]; t = open(p).read().rstrip('\n').split('\n'); l = t[-1]; i = len(l) - 20
t[-1] = l[:i] + ('A' if l[i] != 'A' else 'B') + l[i + 1:]; open(p, 'w').write('\n'.join(t) + '\n')" "$d/checkpoint"
refuses "a forged cosignature is refused" "" $R log verify "$d" --vkey "$WORK/log.vkey" --witness "$WORK/w2.vkey" --min-witnesses 1
check "... naming the witness" grep -q "signature of w2.example does not verify" "$WORK/.err"

# A witness refuses a log that rewrote its history.
entries 300 1000 | $R log append "$WORK/fork" --key "$WORK/log.key" --batch 100 >/dev/null
entries 300 300 | $R log append "$WORK/fork" --key "$WORK/log.key" --batch 100 >/dev/null
refuses "a witness does not cosign a fork of what it saw" "" \
    $R log cosign "$WORK/fork" "$WORK/seen" --vkey "$WORK/log.vkey" --key "$WORK/w1.key"
check "... saying the log does not extend it" grep -q "does NOT extend" "$WORK/.err"

# Migration from the former JSONL log is tested in unit/test_tlog.c; a
# former log is never written over.
mkdir -p "$WORK/former" && echo '{}' >"$WORK/former/entries.jsonl"
refuses "a directory holding a former JSONL log is not made a tile log" "$WORK/former/checkpoint" \
    bash -c "echo '{}' | '$R' log append '$WORK/former' --key '$WORK/log.key'"
check "... pointing to log migrate" grep -q "log migrate" "$WORK/.err"
check "log verify without --vkey: a usage error (2) that says why" bash -c "
    '$R' log verify '$d' 2>'$WORK/e'; [ \$? = 2 ] && grep -q 'never against key material' '$WORK/e'"
check "verify-proof without --vkey: the same" bash -c "
    '$R' log verify-proof --entry '$WORK/entry5' '$WORK/proof5' 2>'$WORK/e'; [ \$? = 2 ] && grep -q -- '--vkey VKEY is required' '$WORK/e'"
finish

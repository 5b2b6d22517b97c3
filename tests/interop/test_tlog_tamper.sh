#!/bin/bash
# The transparency log refuses what was changed after the fact, with both
# reprosign and Go's checker: a byte in a bundle, in a tile, in the
# checkpoint; a wrong key; entries reordered; a log truncated. And it
# survives kill -9 in the middle of appends: 20 random points, after each
# of which the log verifies (TLOG_CRASH_SEED=N replays a run).
. "$TESTS_DIR/lib.sh"
. "$TESTS_DIR/interop/tlog_lib.sh"

"$REPROSIGN" log keygen example.org/reprosign --output "$WORK/log" >/dev/null
"$REPROSIGN" log keygen example.org/reprosign --output "$WORK/other" >/dev/null
good=$WORK/good
entries 70000 0 | "$REPROSIGN" log append "$good" --key "$WORK/log.key" --batch 5000 >/dev/null
check "the log of 70000 entries verifies" "$REPROSIGN" log verify "$good" --vkey "$WORK/log.vkey"

# tampered NAME WHAT: both checkers must refuse the copy $WORK/NAME, and
# reprosign must name WHAT in its one-line error.
tampered() {
    local name=$1 what=$2
    refuses "$name: reprosign log verify refuses it" "" "$REPROSIGN" log verify "$WORK/$name" --vkey "$WORK/log.vkey"
    check "... naming $what" grep -q -- "$what" "$WORK/.err"
    check "... and Go's checker refuses it too" bash -c "! '$WORK/tlogcheck' verify '$WORK/$name' '$WORK/log.vkey' 2>/dev/null"
}
copy() { rm -rf "$WORK/$1"; cp -a "$good" "$WORK/$1"; }
flip() {  # flip FILE OFFSET: one byte changed
    python3 -c "
import sys
p, o = sys.argv[1], int(sys.argv[2]); b = bytearray(open(p, 'rb').read()); b[o] ^= 1; open(p, 'wb').write(b)" "$1" "$2"
}

copy bundle; flip "$WORK/bundle/tile/entries/100" 500
tampered bundle "entry 2560[0-9]"
copy tile0; flip "$WORK/tile0/tile/0/200" 100
tampered tile0 "entry 51203 does not match"
copy tile1; flip "$WORK/tile1/tile/1/000" 40
tampered tile1 "tile/1/000: hash 1 does not match"
copy tile2; flip "$WORK/tile2/tile/2/000.p/1" 3
tampered tile2 "tile/2/000.p/1: hash 0"
copy partial; flip "$WORK/partial/tile/0/273.p/112" 0
tampered partial "entry 69888 does not match"
copy cp-root; python3 -c "
import base64, sys
p = sys.argv[1]; l = open(p).read().split('\n'); r = bytearray(base64.b64decode(l[2])); r[0] ^= 1
l[2] = base64.b64encode(bytes(r)).decode(); open(p, 'w').write('\n'.join(l))" "$WORK/cp-root/checkpoint"
tampered cp-root "does not verify"
copy cp-sig; python3 -c "
import sys
p = sys.argv[1]; t = open(p).read(); i = t.rindex(' ') + 10
open(p, 'w').write(t[:i] + ('A' if t[i] != 'A' else 'B') + t[i + 1:])" "$WORK/cp-sig/checkpoint"
tampered cp-sig "does not verify"
refuses "a wrong key: reprosign refuses the log" "" "$REPROSIGN" log verify "$good" --vkey "$WORK/other.vkey"
check "... naming the key it wanted" grep -q "no signature by the key example.org/reprosign" "$WORK/.err"
check "... and so does Go's checker" bash -c "! '$WORK/tlogcheck' verify '$good' '$WORK/other.vkey' 2>/dev/null"
copy reorder; python3 -c "
import sys
p = sys.argv[1]; b = open(p, 'rb').read(); es = []; o = 0
while o < len(b):
    n = int.from_bytes(b[o:o + 2], 'big'); es.append(b[o:o + 2 + n]); o += 2 + n
es[3], es[4] = es[4], es[3]; open(p, 'wb').write(b''.join(es))" "$WORK/reorder/tile/entries/007"
tampered reorder "entry 1795 does not match"
copy trunc-bundle; truncate -s -1 "$WORK/trunc-bundle/tile/entries/050"
tampered trunc-bundle "entries/050: entry 255 of the bundle runs past its end"
copy trunc-tile; truncate -s 8000 "$WORK/trunc-tile/tile/0/050"
tampered trunc-tile "tile/0/050: a tile of 256 hashes must be 8192 bytes"
copy missing; rm "$WORK/missing/tile/entries/273.p/112"
tampered missing "tile/entries/273.p/112"
copy shorter; python3 -c "
import sys
p = sys.argv[1]; l = open(p).read().split('\n'); l[1] = '69000'; open(p, 'w').write('\n'.join(l))" "$WORK/shorter/checkpoint"
tampered shorter "does not verify"

# ---- the empty log: RFC 6962's empty root, SHA-256 of nothing ----
"$REPROSIGN" log append "$WORK/empty" --key "$WORK/log.key" </dev/null >/dev/null
check "an empty log's checkpoint has the empty tree's root" \
    test "$(sed -n 3p "$WORK/empty/checkpoint")" = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
check "... and verifies with reprosign and with Go (a crash can leave it so)" bash -c "
    '$REPROSIGN' log verify '$WORK/empty' --vkey '$WORK/log.vkey' >/dev/null &&
    '$WORK/tlogcheck' verify '$WORK/empty' '$WORK/log.vkey' >/dev/null"

# ---- crash safety: kill -9 during appends ----
seed=${TLOG_CRASH_SEED:-$(( $(date +%s) % 100000 ))}
echo "# crash seed $seed (replay: TLOG_CRASH_SEED=$seed)"
RANDOM=$seed
crash=$WORK/crash
entries 200000 0 >"$WORK/stream"
prev=0 bad=0 sizes=
for point in $(seq 1 20); do
    delay=$(( RANDOM % 400 ))
    batch=$(( RANDOM % 300 + 1 ))
    "$REPROSIGN" log append "$crash" --key "$WORK/log.key" --batch "$batch" <"$WORK/stream" >/dev/null 2>&1 &
    pid=$!
    sleep "$(printf '0.%03d' "$delay")"
    kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    size=$(sed -n 2p "$crash/checkpoint" 2>/dev/null || echo 0)
    # Killed while the log was being made: there is no log yet, or a whole one.
    [ -e "$crash" ] || { prev=0; sizes="$sizes none"; continue; }
    if ! "$REPROSIGN" log verify "$crash" --vkey "$WORK/log.vkey" >"$WORK/crash.out" 2>&1 ||
       ! "$WORK/tlogcheck" verify "$crash" "$WORK/log.vkey" >>"$WORK/crash.out" 2>&1 || [ "${size:-0}" -lt "$prev" ]; then
        bad=$((bad + 1)); echo "point $point (after ${delay} ms, batch $batch, size $size):"; sed 's/^/    /' "$WORK/crash.out"
    fi
    prev=${size:-0}; sizes="$sizes $prev"
done
echo "# sizes after each kill:$sizes"
check "kill -9 at 20 random points: the log verifies after every one (reprosign and Go), never shrinks" test "$bad" = 0
check "... and appending goes on from where the crash left it" bash -c "
    entries 10 0 | '$REPROSIGN' log append '$crash' --key '$WORK/log.key' >/dev/null &&
    '$REPROSIGN' log verify '$crash' --vkey '$WORK/log.vkey' >/dev/null"
finish

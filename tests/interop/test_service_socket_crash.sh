#!/bin/bash
# kill -9 of the signing service at random points while clients sign
# through its socket: every request that was answered has its entry in
# the log under the checkpoint the crash left (the entry at the answer's
# log_index, with the signature's SHA-256), the log verifies, and the
# restarted service goes on appending to it. What this cannot show is a
# power cut: that needs a disk whose synced data survives one (an honest
# write cache), as docs/transparency-log.md says.
. "$TESTS_DIR/lib.sh"
need_tool python3

TRIALS=${SOCKET_CRASH_TRIALS:-8}
# The kill points and client counts are random; SOCKET_CRASH_SEED replays a run's.
SEED=${SOCKET_CRASH_SEED:-$(( $(date +%s%N) % 32768 ))}
RANDOM=$SEED
echo "# seed $SEED (replay: SOCKET_CRASH_SEED=$SEED)"

make_key db
export SOURCE_DATE_EPOCH=1700000000
# Sixteen distinct images, each a request file that carries its certificate.
for i in $(seq 0 15); do
    python3 "$TESTS_DIR/tools/mkpe.py" "$WORK/img$i.efi" --trailing $((i * 8))
    "$REPROSIGN" sign --prepare-offline --cert "$WORK/db.crt" --output "$WORK/r$i.req" "$WORK/img$i.efi"
done
sock=$WORK/s
cat >"$WORK/config.json" <<JSON
{"archive": "$WORK/none", "requests": "$WORK/none.json", "allow_unsigned_archive": true,
 "keys": {"efi": {"key": "$WORK/db.key", "cert": "$WORK/db.crt"}},
 "output": "$WORK/out", "log": "$WORK/log",
 "socket": {"path": "$sock", "allow_uids": [$(id -u)]}, "poll_interval": 3600}
JSON
mkdir -p "$WORK/out"
"$REPROSIGN" service init --state "$WORK/state" --config "$WORK/config.json"

# A client: sends request files in turn, one at a time, and for each
# answer appends "LOG_INDEX SHA256-OF-SIGNATURE" to its record, flushed at
# once, until the connection dies with the service.
cat >"$WORK/client.py" <<'PY'
import base64, hashlib, json, socket, struct, sys
sock, work, record, first = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
reqs = [open(f"{work}/r{i}.req", "rb").read() for i in range(16)]
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sock)
except OSError:
    sys.exit(0)
def take(n):
    out = b""
    while len(out) < n:
        more = s.recv(n - len(out))
        if not more:
            raise ConnectionError
        out += more
    return out
with open(record, "a", buffering=1) as rec:
    i = first
    try:
        while True:
            m = reqs[i % 16]; i += 1
            s.sendall(struct.pack(">I", len(m)) + m)
            a = json.loads(take(struct.unpack(">I", take(4))[0]))
            if not a.get("ok"):
                sys.exit("refused: %s" % a)
            sig = base64.b64decode(a["signature"])
            rec.write("%d %s\n" % (a["log_index"], hashlib.sha256(sig).hexdigest()))
    except (ConnectionError, OSError):
        pass
PY

start_service() {
    rm -f "$sock"   # a killed service leaves its socket file
    "$REPROSIGN" service run --state "$WORK/state" 2>>"$WORK/service.log" &
    pid=$!
    for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.05; done
}

# The kill comes a random time after the first answer, so it falls while
# the clients keep the service busy.
wait_first_answer() {
    for _ in $(seq 400); do
        cat "$WORK"/rec.* 2>/dev/null | grep -q . && return 0
        sleep 0.05
    done
    return 1
}

check_answered() {  # every recorded answer is in the log the crash left
    python3 - "$WORK/log" "$TESTS_DIR" $(compgen -G "$WORK/rec.*") <<'PY'
import json, sys
sys.path.insert(0, sys.argv[2] + "/interop")
import tlog_entries
log, records = sys.argv[1], sys.argv[3:]
entries = [json.loads(e) for e in tlog_entries.entries(log)]
answered = 0
for r in records:
    for line in open(r):
        index, sig = line.split()
        index = int(index)
        answered += 1
        assert index < len(entries), "answer for entry %d, but the checkpoint holds %d" % (index, len(entries))
        assert entries[index]["signature_sha256"] == sig, "entry %d is not the answered signature" % index
print("%d answers, all in the checkpoint of %d entries" % (answered, len(entries)))
PY
}

bad=0
for t in $(seq 1 "$TRIALS"); do
    clients=$(( RANDOM % 8 + 1 ))
    delay=$(( RANDOM % 1500 ))
    rm -f "$WORK"/rec.*
    start_service
    for c in $(seq 1 "$clients"); do
        python3 "$WORK/client.py" "$sock" "$WORK" "$WORK/rec.$c" "$c" &
    done
    wait_first_answer || fail "trial $t: no answer within 20 s"
    sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
    kill -9 "$pid"
    wait 2>/dev/null
    if out=$(check_answered 2>&1) &&
        "$REPROSIGN" log verify "$WORK/log" --vkey "$WORK/state/log.vkey" >"$WORK/verify.out" 2>&1; then
        pass "trial $t: killed $delay ms after the first answer, under $clients client(s): $out; the log verifies"
    else
        bad=$((bad + 1))
        fail "trial $t: killed $delay ms after the first answer, under $clients client(s)"
        echo "$out" | sed 's/^/    /'; sed 's/^/    /' "$WORK/verify.out"
    fi
done
# The last crash's log takes appends again.
start_service
rm -f "$WORK"/rec.*
timeout 5 python3 "$WORK/client.py" "$sock" "$WORK" "$WORK/rec.after" 0 &
client=$!
wait_first_answer
kill "$pid"; wait "$pid"
wait "$client" 2>/dev/null
check "after the crashes the service appends again, and what it answered is in the log" check_answered
check "... which verifies" "$REPROSIGN" log verify "$WORK/log" --vkey "$WORK/state/log.vkey"
[ "$bad" = 0 ] || echo "# replay: SOCKET_CRASH_SEED=$SEED"
finish

#!/bin/bash
# kill -9 at random moments: whatever state a pass dies in, the next pass
# finishes every request exactly once (one output directory, one set of
# log entries, no temporary files left in the output directory) and the
# log still verifies.
. "$TESTS_DIR/lib.sh"
need_fixtures shim
. "$TESTS_DIR/interop/service_lib.sh"

TRIALS=${SERVICE_CRASH_TRIALS:-20}
# The kill points are random; SERVICE_CRASH_SEED replays a run's.
SEED=${SERVICE_CRASH_SEED:-$(( $(date +%s%N) % 32768 ))}
RANDOM=$SEED
echo "# seed $SEED (replay: SERVICE_CRASH_SEED=$SEED)"
repo=$WORK/repo
make_repo "$repo"

# How long an uninterrupted pass takes, to spread the kills over it.
write_config ref "$repo"
svc init --state "$WORK/ref-state" --config "$WORK/ref.json"
start=$(date +%s%N)
check "an uninterrupted pass" svc run --state "$WORK/ref-state" --once
span_ms=$(( ($(date +%s%N) - start) / 1000000 + 50 ))
echo "# a pass takes ~${span_ms} ms"

# One service per state: a second is refused while the first runs, and a
# killed one leaves the state free at once. The lock is queried (F_GETLK)
# rather than tried, so the query cannot steal it from the starting service.
lock_held() {
    python3 - "$1/lock" <<'PY'
import fcntl, os, struct, sys
try:
    fd = os.open(sys.argv[1], os.O_RDWR)
except FileNotFoundError:
    sys.exit(1)
lk = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack('hhqqi', fcntl.F_WRLCK, 0, 0, 0, 0))
sys.exit(0 if struct.unpack('hhqqi', lk)[0] != fcntl.F_UNLCK else 1)
PY
}
"$REPROSIGN" service run --state "$WORK/ref-state" >"$WORK/daemon.log" 2>&1 &
daemon=$!
for _ in $(seq 100); do lock_held "$WORK/ref-state" && break; sleep 0.1; done
refuses "a second service on a running state is refused" "" svc run --state "$WORK/ref-state" --once
grep -q "a service is already running on this state" "$WORK/.err" ||
    fail "the refusal says why: $(cat "$WORK/.err")"
kill -9 "$daemon"; wait "$daemon" 2>/dev/null
check "once the running service is killed, the next run takes the state at once" \
    svc run --state "$WORK/ref-state" --once

check_done() {  # check_done TRIAL NAME
    local t=$1 name=$2 state=$WORK/$2-state out=$WORK/$2-out log=$WORK/$2-log
    python3 - "$state" "$out" "$log" "$id1" "$id2" "$REPROSIGN" <<'PY'
import collections, hashlib, io, json, os, subprocess, sys, tarfile
state, out, log, ids, reprosign = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:6], sys.argv[6]
st = json.loads(subprocess.check_output([reprosign, 'service', 'status', '--state', state, '--json']))
assert sorted(r['id'] for r in st['requests']) == sorted(ids), st
assert all(r['status'] == 'published' for r in st['requests']), st
assert sorted(os.listdir(out)) == sorted(ids), os.listdir(out)      # nothing hidden, nothing partial
entries = [json.loads(l) for l in subprocess.check_output(
    ['python3', os.path.join(os.environ['TESTS_DIR'], 'interop', 'tlog_entries.py'), log]).splitlines()]
count = collections.Counter((e['request'], e['path']) for e in entries)
assert len(entries) == 4 and all(v == 1 for v in count.values()), count
subprocess.check_call([reprosign, 'log', 'verify', log, '--vkey', os.path.join(state, 'log.vkey')],
                      stdout=subprocess.DEVNULL)
for r in st['requests']:
    d = os.path.join(out, r['id'])
    names = sorted(os.listdir(d))
    assert names == sorted(o['name'] for o in r['outputs']), names
    for o in r['outputs']:
        assert 'sha256:' + hashlib.sha256(open(os.path.join(d, o['name']), 'rb').read()).hexdigest() == o['digest']
    with tarfile.open(os.path.join(d, 'signatures.tar.gz')) as t:
        sigs = {m.name[len('shim-unsigned/'):-4]: hashlib.sha256(t.extractfile(m).read()).hexdigest()
                for m in t.getmembers() if m.isfile()}
    logged = {e['path']: e['signature_sha256'] for e in entries if e['request'] == r['id']}
    assert sigs == logged, (sigs, logged)       # the log records exactly what was published
PY
}

for t in $(seq 1 "$TRIALS"); do
    name=t$t
    write_config "$name" "$repo"
    svc init --state "$WORK/$name-state" --config "$WORK/$name.json"
    kills=$(( RANDOM % 2 + 1 ))
    for k in $(seq 1 "$kills"); do
        delay=$(( RANDOM % span_ms ))
        "$REPROSIGN" service run --state "$WORK/$name-state" --once >/dev/null 2>&1 &
        pid=$!
        sleep "$(printf '0.%03d' "$delay")"
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    svc run --state "$WORK/$name-state" --once >"$WORK/$name.log" 2>&1
    rc=$?
    if [ "$rc" = 0 ] && check_done "$t" "$name" >"$WORK/$name.check" 2>&1; then
        pass "trial $t: killed $kills time(s), then every request done exactly once; the log verifies"
    else
        fail "trial $t (kills: $kills, rc $rc)"; sed 's/^/    /' "$WORK/$name.log" "$WORK/$name.check"
    fi
    rm -rf "$WORK/$name-state/staging" 2>/dev/null
done
finish

#!/bin/bash
# The service as systemd runs it, without systemd as PID 1: the shipped
# units pass systemd-analyze verify and score at most 2.0 on
# systemd-analyze security; READY, STATUS and WATCHDOG reach NOTIFY_SOCKET;
# systemd-socket-activate passes the signing socket in; log lines reach
# journald's socket with structured fields, or stderr with a timestamp.
. "$TESTS_DIR/lib.sh"
need_tool systemd-analyze
need_tool systemd-socket-activate
need_tool python3
LISTEN="python3 $TESTS_DIR/tools/sd_listener.py"
units=$TESTS_DIR/../debian

# ---- the units ----
mkdir -p "$WORK/units"
cp "$units/reprosign.service" "$units/reprosign.socket" "$WORK/units/"
# verify wants ExecStart= to exist: point it at the binary under test.
sed -i "s|/usr/bin/reprosign|$(readlink -f "$REPROSIGN")|" "$WORK/units/reprosign.service"
check "systemd-analyze verify passes on reprosign.service and reprosign.socket" \
    systemd-analyze verify --man=no "$WORK/units/reprosign.socket" "$WORK/units/reprosign.service"
score=$(systemd-analyze security --offline=yes "$units/reprosign.service" 2>/dev/null |
    sed -n 's/^→ Overall exposure level for reprosign.service: \([0-9.]*\) .*/\1/p')
check "systemd-analyze security --offline=yes: exposure $score, at most 2.0" \
    python3 -c "import sys; sys.exit(0 if 0 <= float('$score') <= 2.0 else 1)"
check "the socket unit is 0660 for the reprosign-sign group" bash -c "
    grep -qx 'SocketMode=0660' '$units/reprosign.socket' && grep -qx 'SocketGroup=reprosign-sign' '$units/reprosign.socket'"

# ---- a service to run ----
make_key db
mkdir -p "$WORK/out"
sock=$WORK/sign.sock
cat >"$WORK/config.json" <<JSON
{
  "// ": "a comment member is allowed",
  "archive": "$WORK/no-archive",
  "requests": "$WORK/no-requests.json",
  "allow_unsigned_archive": true,
  "keys": {"efi": {"key": "$WORK/db.key", "cert": "$WORK/db.crt"}},
  "output": "$WORK/out",
  "log": "$WORK/log",
  "socket": {"path": "$sock", "allow_uids": [$(id -u)]},
  "poll_interval": 1
}
JSON
"$REPROSIGN" service init --state "$WORK/state" --config "$WORK/config.json"
need_fixtures shim
cp "$FIXTURES/root/shim-unsigned/usr/lib/shim/fbx64.efi" "$WORK/app.efi"

wait_for() { for _ in $(seq 150); do [ -e "$1" ] && return 0; sleep 0.1; done; return 1; }
stop_service() { kill -TERM "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

# ---- sd_notify ----
$LISTEN notify "$WORK/notify.sock" "$WORK/notify" 60 & listener=$!
wait_for "$WORK/notify.ready"
NOTIFY_SOCKET=$WORK/notify.sock WATCHDOG_USEC=400000 "$REPROSIGN" service run --state "$WORK/state" 2>"$WORK/run.err" &
pid=$!
for _ in $(seq 150); do grep -q '^WATCHDOG=1' "$WORK/notify" 2>/dev/null && break; sleep 0.1; done
sleep 1
stop_service "$pid"
touch "$WORK/notify.stop"; wait "$listener"
check "READY=1 reaches NOTIFY_SOCKET" grep -qx 'READY=1' "$WORK/notify"
check "... with a STATUS= line of the requests' counts" grep -q '^STATUS=0 pending, 0 held, 0 failed, 0 published, 0 signatures today$' "$WORK/notify"
check "WATCHDOG=1 is sent, more than once within the watchdog's period" test "$(grep -c '^WATCHDOG=1$' "$WORK/notify")" -ge 2
check "STOPPING=1 on SIGTERM" grep -qx 'STOPPING=1' "$WORK/notify"
check "without the journal, log lines carry a UTC timestamp" \
    grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z reprosign: listening on ' "$WORK/run.err"

# ---- socket activation ----
systemd-socket-activate -l "$sock" "$REPROSIGN" service run --state "$WORK/state" 2>"$WORK/activated.err" &
pid=$!
wait_for "$sock"
check "a signature through the socket systemd passed in" \
    "$REPROSIGN" sign --via "$sock" --cert "$WORK/db.crt" --detached --output "$WORK/app.sig" "$WORK/app.efi"
check "... is logged with the peer" grep -q "socket: uid $(id -u) pid [0-9]* (.*reprosign): signed pe" "$WORK/activated.err"
stop_service "$pid"
check "the passed socket is left for systemd to remove" test -S "$sock"
rm -f "$sock"

# ---- the journal's native protocol ----
if [ ! -e /run/systemd/journal/socket ] && [ "$(id -u)" = 0 ]; then
    mkdir -p /run/systemd/journal
    $LISTEN journal /run/systemd/journal/socket "$WORK/journal" 60 & listener=$!
    wait_for "$WORK/journal.ready"
    # stderr must be the stream JOURNAL_STREAM names: here, a file.
    exec 9>"$WORK/stream"
    js=$(stat -c '%d:%i' "$WORK/stream")
    JOURNAL_STREAM=$js "$REPROSIGN" service run --state "$WORK/state" 2>&9 &
    pid=$!
    wait_for "$sock"
    "$REPROSIGN" sign --via "$sock" --cert "$WORK/db.crt" --detached --output "$WORK/app2.sig" "$WORK/app.efi"
    sleep 0.5
    stop_service "$pid"
    exec 9>&-
    touch "$WORK/journal.stop"; wait "$listener"
    rmdir /run/systemd/journal 2>/dev/null; rmdir /run/systemd 2>/dev/null
    check "log lines go to journald, not to stderr" bash -c "grep -q '^MESSAGE=listening on ' '$WORK/journal' && ! grep -q listening '$WORK/stream'"
    check "a socket signature carries REPROSIGN_PEER_UID and REPROSIGN_DIGEST" bash -c "
        grep -B8 -A8 '^MESSAGE=socket: uid' '$WORK/journal' | grep -qx 'REPROSIGN_PEER_UID=$(id -u)' &&
        grep -B8 -A8 '^MESSAGE=socket: uid' '$WORK/journal' | grep -q '^REPROSIGN_DIGEST=sha256:'"
    check "... with SYSLOG_IDENTIFIER=reprosign" grep -qx 'SYSLOG_IDENTIFIER=reprosign' "$WORK/journal"
else
    leave_out "journald runs here (or not root): the native-protocol check"
fi
finish

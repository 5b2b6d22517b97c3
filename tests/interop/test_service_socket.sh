#!/bin/bash
# The build-time socket: 50 clients at once, 20 signatures each, every one
# byte-identical to signing locally with the same key; each logged; a uid
# not on the allowlist refused with a clear error; sign-template --via and
# sign-blob --via.
. "$TESTS_DIR/lib.sh"
need_fixtures shim
need_tool setpriv
CLIENTS=${SOCKET_CLIENTS:-50}
PER_CLIENT=${SOCKET_SIGNATURES:-20}

make_key db
chmod 755 "$WORK"   # the refused client runs as nobody and must reach its files
export SOURCE_DATE_EPOCH=1700000000
mkdir -p "$WORK/files" "$WORK/ref" "$WORK/got" "$WORK/out"
# Ten distinct images: the real shim binaries and variants of them.
for i in 0 1 2 3 4; do
    for f in fbx64 mmx64; do
        cp "$FIXTURES/root/shim-unsigned/usr/lib/shim/$f.efi" "$WORK/files/$f-$i.efi"
        [ "$i" = 0 ] || printf '%s' "$i" | dd of="$WORK/files/$f-$i.efi" bs=1 seek=4000 conv=notrunc status=none
    done
done
chmod -R a+rX "$WORK/files" "$WORK/db.crt"
files=("$WORK"/files/*.efi)
for f in "${files[@]}"; do
    "$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" --detached --output "$WORK/ref/$(basename "$f").sig" "$f"
done

socket_service efi "$WORK/db.key" "$WORK/db.crt"
"$REPROSIGN" service run --state "$WORK/state" 2>"$WORK/service.log" &
service_pid=$!
trap 'kill "$service_pid" 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
check "the service listens" test -S "$sock"

client() {  # client N: PER_CLIENT signatures over the files, round robin
    local c=$1 i f
    for i in $(seq 1 "$PER_CLIENT"); do
        f=${files[$(( (c * PER_CLIENT + i) % ${#files[@]} ))]}
        "$REPROSIGN" sign --via "$sock" --cert "$WORK/db.crt" --detached \
            --output "$WORK/got/$c-$i-$(basename "$f").sig" "$f" || echo "client $c signature $i failed" >>"$WORK/errors"
    done
}
start=$(date +%s%N)
for c in $(seq 1 "$CLIENTS"); do client "$c" & done
wait $(jobs -p | grep -vx "$service_pid")
ms=$(( ($(date +%s%N) - start) / 1000000 ))
total=$((CLIENTS * PER_CLIENT))
echo "# $total signatures from $CLIENTS concurrent clients in $ms ms"
check "no client failed" test ! -s "$WORK/errors"
check "$total signatures received" test "$(ls "$WORK/got" | wc -l)" = "$total"
bad=0
for g in "$WORK"/got/*.sig; do
    name=${g##*/}; name=${name#*-*-}
    cmp -s "$g" "$WORK/ref/$name" || bad=$((bad + 1))
done
check "every one byte-identical to signing locally with the same key" test "$bad" = 0
check "an attached --via signature equals a local one" bash -c "
    '$REPROSIGN' sign --via '$sock' --cert '$WORK/db.crt' --output '$WORK/via.efi' '${files[0]}' &&
    '$REPROSIGN' sign --key '$WORK/db.key' --cert '$WORK/db.crt' --output '$WORK/local.efi' '${files[0]}' &&
    cmp '$WORK/via.efi' '$WORK/local.efi'"
# Each request's entry is under a checkpoint before its answer leaves.
vkey=$WORK/state/log.vkey
log_entries() { python3 "$TESTS_DIR/interop/tlog_entries.py" "$WORK/log" >"$WORK/entries.jsonl"; echo "$WORK/entries.jsonl"; }
log_count() { sed -n 2p "$WORK/log/checkpoint"; }
check "every signature is in the log, which verifies" bash -c "
    '$REPROSIGN' log verify '$WORK/log' --vkey '$vkey' >/dev/null && [ \$(sed -n 2p '$WORK/log/checkpoint') = $((total + 1)) ]"
check "the log records each request's client and digest" python3 -c "
import json
e = [json.loads(l) for l in open('$(log_entries)')]
assert all(x['client']['uid'] == $(id -u) and x['signed_digest'].startswith('sha256:') and x['format'] == 'pe' for x in e)
"
# A request file carries its certificate; sent as it is, the socket signs
# it too, and finishing gives the local signature.
check "a request file sent as it is is signed, and finishes to the local signature" bash -c "
    '$REPROSIGN' sign --prepare-offline --cert '$WORK/db.crt' --output '$WORK/file.req' '${files[1]}' &&
    python3 -c \"
import base64, socket, struct
s = socket.socket(socket.AF_UNIX); s.connect('$sock')
m = open('$WORK/file.req', 'rb').read(); s.sendall(struct.pack('>I', len(m)) + m)
n = struct.unpack('>I', s.recv(4))[0]; a = b''
while len(a) < n: a += s.recv(n - len(a))
open('$WORK/file.value', 'wb').write(base64.b64decode(__import__('json').loads(a)['signature']))\" &&
    '$REPROSIGN' sign --finish '$WORK/file.req' --signature '$WORK/file.value' --detached --output '$WORK/file.sig' &&
    cmp '$WORK/file.sig' '$WORK/ref/$(basename "${files[1]}").sig'"
total=$((total + 1))
check "sign-blob --via has the service sign a request file, which finishes to the local signature" bash -c "
    '$REPROSIGN' sign-blob '$WORK/file.req' --via '$sock' --output '$WORK/blob.value' &&
    '$REPROSIGN' sign --finish '$WORK/file.req' --signature '$WORK/blob.value' --detached --output '$WORK/blob.sig' &&
    cmp '$WORK/blob.sig' '$WORK/ref/$(basename "${files[1]}").sig'"
total=$((total + 1))
# Requests sent ahead of their answers are answered in order.
for i in 2 3 4; do
    "$REPROSIGN" sign --prepare-offline --cert "$WORK/db.crt" --output "$WORK/p$i.req" "${files[$i]}"
done
cat >"$WORK/pipeline.py" <<'PY'
import base64, json, socket, struct, sys
sock, work = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX)
s.connect(sock)
reqs = [open(f"{work}/p{i}.req", "rb").read() for i in (2, 3, 4)]
s.sendall(b"".join(struct.pack(">I", len(m)) + m for m in reqs))
buf = b""
def take(n):
    global buf
    while len(buf) < n:
        more = s.recv(65536)
        if not more:
            sys.exit("the service closed the connection")
        buf += more
    out, buf = buf[:n], buf[n:]
    return out
for i in (2, 3, 4):
    a = json.loads(take(struct.unpack(">I", take(4))[0]))
    open(f"{work}/p{i}.value", "wb").write(base64.b64decode(a["signature"]))
PY
check "three requests in one write get three answers" python3 "$WORK/pipeline.py" "$sock" "$WORK"
for i in 2 3 4; do
    check "... answer $i is for request $i" bash -c "
        '$REPROSIGN' sign --finish '$WORK/p$i.req' --signature '$WORK/p$i.value' --detached --output '$WORK/p$i.sig' &&
        cmp '$WORK/p$i.sig' '$WORK/ref/$(basename "${files[$i]}").sig'"
done
total=$((total + 3))

# A whole template through the socket: one process, a connection per
# worker, the same bytes as with the key, and each file logged by name.
mkdir -p "$WORK/pkgs/test-efi" "$WORK/nobody-out"
cp "${files[@]}" "$WORK/pkgs/test-efi/"
chmod -R a+rX "$WORK/pkgs"
chmod 777 "$WORK/nobody-out"
python3 -c "
import json, os, sys
names = sorted(os.listdir('$WORK/pkgs/test-efi'))
json.dump({'test-efi': {'files': [{'sig_type': 'efi', 'file': n} for n in names]}}, open('$WORK/files.json', 'w'))"
chmod a+r "$WORK/files.json"
"$REPROSIGN" sign-template "$WORK/files.json" --packages "$WORK/pkgs" --key "$WORK/db.key" --cert "$WORK/db.crt" \
    --output "$WORK/tpl-key" --quiet
check "sign-template --via signs a template through the socket" \
    "$REPROSIGN" sign-template "$WORK/files.json" --packages "$WORK/pkgs" --via "$sock" --cert "$WORK/db.crt" \
    --output "$WORK/tpl-via" --quiet
check "... with the same signatures.tar.gz as the key gives" cmp "$WORK/tpl-key/signatures.tar.gz" "$WORK/tpl-via/signatures.tar.gz"
check "... and the same manifest" cmp "$WORK/tpl-key/manifest.json" "$WORK/tpl-via/manifest.json"
total=$((total + ${#files[@]}))
check "... each file logged by the path the client claims" test "$(grep -c '"claimed_path":"test-efi/[a-z0-9-]*\.efi"' "$(log_entries)")" = "${#files[@]}"
refuses "sign-template --via a socket nobody listens on" "$WORK/tpl-none" \
    "$REPROSIGN" sign-template "$WORK/files.json" --packages "$WORK/pkgs" --via "$WORK/none.sock" \
    --cert "$WORK/db.crt" --output "$WORK/tpl-none" --quiet
check "... naming the socket" grep -q "$WORK/none.sock: cannot connect" "$WORK/.err"
refuses "sign-template --via as a uid not on the allowlist" "$WORK/nobody-out/tpl" \
    setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$REPROSIGN" sign-template "$WORK/files.json" --packages "$WORK/pkgs" --via "$sock" --cert "$WORK/db.crt" \
    --output "$WORK/nobody-out/tpl" --quiet
check "... with the service's reason" grep -q "uid 65534 (gid 65534) is not allowed to use this signing socket" "$WORK/.err"
check "... leaving nothing in the output's directory" test -z "$(ls -A "$WORK/nobody-out")"
check "sign-template takes --key or --via, not both" bash -c "
    '$REPROSIGN' sign-template '$WORK/files.json' --packages '$WORK/pkgs' --via '$sock' --key '$WORK/db.key' \
        --cert '$WORK/db.crt' --output '$WORK/tpl-both' 2>'$WORK/both.err'; [ \$? = 2 ] && [ ! -e '$WORK/tpl-both' ]"

refuses "a uid not on the allowlist is refused" "$WORK/nobody.sig" \
    setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$REPROSIGN" sign --via "$sock" --cert "$WORK/db.crt" --detached --output "$WORK/nobody.sig" "${files[0]}"
check "... with a clear reason" grep -q "uid 65534 (gid 65534) is not allowed to use this signing socket" "$WORK/.err"
check "... and the service says so too" grep -q "uid 65534 .* not allowed" "$WORK/service.log"
make_key other
chmod a+r "$WORK/other.crt"
refuses "a certificate the service holds no key for" "$WORK/other.sig" \
    "$REPROSIGN" sign --via "$sock" --cert "$WORK/other.crt" --detached --output "$WORK/other.sig" "${files[0]}"
check "... named by its fingerprint" grep -q "holds no key for the request's certificate (certificate_sha256 $(openssl x509 -in "$WORK/other.crt" -outform DER | sha256sum | cut -c1-64))" "$WORK/.err"
"$REPROSIGN" sign --prepare-offline --cert "$WORK/other.crt" --output "$WORK/other.req" "${files[0]}"
refuses "sign-blob --via, a request for a certificate the service holds no key for" "$WORK/other.value" \
    "$REPROSIGN" sign-blob "$WORK/other.req" --via "$sock" --output "$WORK/other.value"
check "... with the service's reason" grep -q "$WORK/other.req: $sock: the service holds no key" "$WORK/.err"
check "sign-blob --via takes no --cert" bash -c "
    '$REPROSIGN' sign-blob '$WORK/file.req' --via '$sock' --cert '$WORK/db.crt' --output '$WORK/x.value' 2>/dev/null
    [ \$? = 2 ] && [ ! -e '$WORK/x.value' ]"
refuses "a request that is not one" "" python3 -c "
import socket, struct, sys
s = socket.socket(socket.AF_UNIX); s.connect('$sock')
m = b'{\"type\": \"nonsense\"}'; s.sendall(struct.pack('>I', len(m)) + m)
n = struct.unpack('>I', s.recv(4))[0]; a = s.recv(n).decode()
sys.stderr.write('reprosign: ' + a + '\n'); sys.exit(1 if 'not a reprosign offline-signing request' in a else 3)"
refuses "a request naming its certificate by something that is not a SHA-256" "" python3 -c "
import json, socket, struct, sys
r = json.load(open('$WORK/file.req')); del r['certificate']; r['certificate_sha256'] = 'zz\\n' * 16
m = json.dumps(r).encode()
s = socket.socket(socket.AF_UNIX); s.connect('$sock'); s.sendall(struct.pack('>I', len(m)) + m)
n = struct.unpack('>I', s.recv(4))[0]; a = s.recv(n).decode()
sys.stderr.write('reprosign: ' + a + '\n'); sys.exit(1 if 'certificate_sha256 is not a SHA-256 in hex' in a else 3)"
# A socket that answers with a value the key never made: every --via
# command checks it against the certificate and writes nothing.
cat >"$WORK/liar.py" <<'PY'
import base64, json, os, socket, socketserver, struct, sys
answer = json.dumps({"ok": True, "signature": base64.b64encode(os.urandom(256)).decode(), "log_index": 0}).encode()
class Liar(socketserver.BaseRequestHandler):
    def handle(self):
        while True:
            h = self.request.recv(4, socket.MSG_WAITALL)
            if len(h) < 4:
                return
            self.request.recv(struct.unpack(">I", h)[0], socket.MSG_WAITALL)
            self.request.sendall(struct.pack(">I", len(answer)) + answer)
socketserver.ThreadingUnixStreamServer.daemon_threads = True
socketserver.ThreadingUnixStreamServer(sys.argv[1], Liar).serve_forever()
PY
python3 "$WORK/liar.py" "$WORK/liar.sock" &
liar_pid=$!
for _ in $(seq 100); do [ -S "$WORK/liar.sock" ] && break; sleep 0.1; done
refuses "sign --via a socket whose value does not verify" "$WORK/liar.sig" \
    "$REPROSIGN" sign --via "$WORK/liar.sock" --cert "$WORK/db.crt" --detached --output "$WORK/liar.sig" "${files[0]}"
check "... saying so" grep -q "does not verify with the request's certificate" "$WORK/.err"
refuses "sign-blob --via the same" "$WORK/liar.value" \
    "$REPROSIGN" sign-blob "$WORK/file.req" --via "$WORK/liar.sock" --output "$WORK/liar.value"
check "... saying so" grep -q "does not verify with the request's certificate" "$WORK/.err"
refuses "sign-template --via the same" "$WORK/tpl-liar" \
    "$REPROSIGN" sign-template "$WORK/files.json" --packages "$WORK/pkgs" --via "$WORK/liar.sock" \
    --cert "$WORK/db.crt" --output "$WORK/tpl-liar" --quiet
check "... saying so" grep -q "does not verify with the request's certificate" "$WORK/.err"
kill "$liar_pid"
check "the log is unchanged by refusals" test "$(log_count)" = $((total + 1))

kill "$service_pid"; wait "$service_pid"
check "SIGTERM stops the service and removes the socket" test ! -e "$sock"

# kill -9 under load: every signature a client received is in the log,
# and the log verifies at the checkpoint the crash left.
before=$(log_count)
"$REPROSIGN" service run --state "$WORK/state" 2>>"$WORK/service.log" &
service_pid=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
mkdir -p "$WORK/load"
for c in $(seq 1 8); do
    ( for i in $(seq 1 200); do
        "$REPROSIGN" sign --via "$sock" --cert "$WORK/db.crt" --detached --output "$WORK/load/$c-$i.sig" "${files[0]}" 2>/dev/null || break
      done ) &
done
sleep 1.5
kill -9 "$service_pid"
wait 2>/dev/null
received=$(ls "$WORK/load" | wc -l)
logged=$(( $(log_count) - before ))
echo "# killed under load: $received signatures received, $logged logged"
check "after kill -9 under load, every signature received is logged" test "$received" -le "$logged"
"$REPROSIGN" service run --state "$WORK/state" 2>>"$WORK/service.log" &
service_pid=$!
# The socket file of the killed service is still there: wait for the new
# one to answer instead.
for _ in $(seq 100); do
    "$REPROSIGN" sign --via "$sock" --cert "$WORK/db.crt" --detached --output "$WORK/probe.sig" "${files[0]}" 2>/dev/null && break
    sleep 0.1
done
check "the restarted service serves again" test -s "$WORK/probe.sig"
kill "$service_pid"; wait "$service_pid"
check "... and the log verifies after the crash and the restart" \
    "$REPROSIGN" log verify "$WORK/log" --vkey "$vkey"
finish

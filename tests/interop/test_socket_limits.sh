#!/bin/bash
# The build-time socket's memory (#46, docs/security.md "The socket"):
# - a module's section table is read as the kernel reads it, e_shnum
#   entries of one Elf64_Shdr, a window at a time: an attached sparse
#   memfd with e_shentsize 8192 or 65535 (512 MiB or 4 GiB of table, for
#   nothing on the client's side) is refused without the service's peak
#   memory (VmHWM) moving, and the largest table the kernel reads (65535
#   entries) is signed;
# - a request of exactly RS_PROTO_MAX_REQUEST (64 KiB) is signed, one byte
#   more refused; 256 JSON values are read, 257 refused;
# - one uid's connections hold at most 2 MiB of requests: 31 requests of
#   the largest size at once are all signed, a 32nd is refused.
# Legitimate modules sign byte for byte as with the key itself.
. "$TESTS_DIR/lib.sh"
export SOURCE_DATE_EPOCH=1700000000

make_key mod
python3 "$TESTS_DIR/tools/mkko.py" "$WORK/small.ko"
# The largest table the kernel reads: 65535 null entries, 4 MiB, sparse.
python3 - "$WORK/big.ko" <<'PY'
import struct, sys
h = bytearray(open(sys.argv[1].replace("big", "small"), "rb").read()[:64])
struct.pack_into("<Q", h, 0x28, 64)                 # e_shoff
struct.pack_into("<HH", h, 0x3A, 64, 0xFFFF)        # e_shentsize, e_shnum
with open(sys.argv[1], "wb") as f:
    f.write(h)
    f.truncate(64 + 0xFFFF * 64)
PY
for m in small big; do
    "$REPROSIGN" sign --prepare-offline --cert "$WORK/mod.crt" --output "$WORK/$m.req" "$WORK/$m.ko"
    "$REPROSIGN" sign --key "$WORK/mod.key" --cert "$WORK/mod.crt" --detached --output "$WORK/$m.ref" "$WORK/$m.ko"
done

socket_service linux-module "$WORK/mod.key" "$WORK/mod.crt"
"$REPROSIGN" service run --state "$WORK/state" 2>"$WORK/service.log" &
service_pid=$!
trap 'kill "$service_pid" 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
check "the service listens" test -S "$sock"

cat >"$WORK/client.py" <<'PY'
import base64, fcntl, json, os, select, socket, struct, sys

SOCK, WORK, PID = sys.argv[1], sys.argv[2], sys.argv[3]
LIMIT = 64 * 1024


def request(name, pad=0, values=0, file=None):
    """The request file for WORK/name.ko, its image attached, padded with
    spaces to pad bytes or with an array that makes it values values,
    naming file if given."""
    r = json.load(open(f"{WORK}/{name}.req"))
    r["image"] = "attached"
    if file is not None:
        r["file"] = file
    text = json.dumps(r)
    if values:
        have = text.count(",") + text.count("{") + text.count("[")   # none inside its strings
        extra = values - have - 2                                     # the "," before "x" and the "["
        text = text[:-1] + ', "x": [' + ",".join(["0"] * (extra + 1)) + "]}"
    if pad:
        text += " " * (pad - len(text))
    return text.encode()


def memfd(data=b"", size=None):
    fd = os.memfd_create("image", os.MFD_ALLOW_SEALING)
    os.write(fd, data)
    if size is not None:
        os.ftruncate(fd, size)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW)
    return fd


def connect():
    s = socket.socket(socket.AF_UNIX)
    s.connect(SOCK)
    return s


def answer(s):
    buf = b""
    while len(buf) < 4 or len(buf) < 4 + struct.unpack(">I", buf[:4])[0]:
        more = s.recv(65536)
        if not more:
            return None
        buf += more
    return json.loads(buf[4:])


def send(s, msg, fd=None, cut=0):
    """msg as a frame, less its last cut bytes."""
    frame = struct.pack(">I", len(msg)) + msg
    frame = frame[:len(frame) - cut]
    if fd is None:
        s.sendall(frame)
    else:
        socket.send_fds(s, [frame[:1]], [fd])
        s.sendall(frame[1:])


def ask(msg, fd):
    s = connect()
    send(s, msg, fd)
    a = answer(s)
    s.close()
    return a


def vmhwm_kib():
    for line in open(f"/proc/{PID}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])


def hostile(shentsize):
    """A module header whose table is 65535 entries of shentsize bytes,
    in a sparse memfd just large enough to hold them."""
    h = bytearray(open(f"{WORK}/small.ko", "rb").read()[:64])
    struct.pack_into("<Q", h, 0x28, 64)
    struct.pack_into("<HH", h, 0x3A, shentsize, 0xFFFF)
    return memfd(bytes(h), 64 + 0xFFFF * shentsize)


def sig(a):
    return base64.b64decode(a["signature"]) if a and a.get("ok") else None


def main(what):
    if what == "small":      # the legitimate module: its signature value
        a = ask(request("small"), memfd(open(f"{WORK}/small.ko", "rb").read()))
        open(f"{WORK}/small.value", "wb").write(sig(a))
    elif what == "big":      # the largest table the kernel reads
        a = ask(request("big"), memfd(open(f"{WORK}/big.ko", "rb").read()))
        open(f"{WORK}/big.value", "wb").write(sig(a))
    elif what.startswith("shentsize="):
        before = vmhwm_kib()
        a = ask(request("small"), hostile(int(what.split("=")[1])))
        grew = vmhwm_kib() - before
        print("refusal:", a, "; VmHWM grew by", grew, "KiB")
        assert a and not a["ok"] and "e_shentsize" in a["error"], a
        assert grew < 32 * 1024, grew
    elif what == "largest-request":
        a = ask(request("small", pad=LIMIT), memfd(open(f"{WORK}/small.ko", "rb").read()))
        assert sig(a) == open(f"{WORK}/small.value", "rb").read(), a
    elif what == "request-over":
        a = ask(request("small", pad=LIMIT + 1), memfd(open(f"{WORK}/small.ko", "rb").read()))
        assert a and not a["ok"] and "the limit is 65536" in a["error"], a
    elif what.startswith("values="):
        a = ask(request("small", values=int(what.split("=")[1])), memfd(open(f"{WORK}/small.ko", "rb").read()))
        print(a)
        assert sig(a) == open(f"{WORK}/small.value", "rb").read() if what == "values=256" else \
            a and not a["ok"] and "more than 256 JSON values" in a["error"], a
    elif what.startswith("claim="):   # a file name of n bytes that tries to forge a journal line
        n = int(what.split("=")[1])
        forged = "x.ko\nsocket: uid 0 pid 1 (/sbin/init): signed module \u202eok.ko "
        name = forged + "a" * (n - len(forged.encode()))
        a = ask(request("small", file=name), memfd(open(f"{WORK}/small.ko", "rb").read()))
        print(a)
        if n > 1024:
            assert a and not a["ok"] and "at most 1024 bytes" in a["error"], a
        else:
            assert sig(a) == open(f"{WORK}/small.value", "rb").read(), a
    elif what == "per-uid":
        # 32 connections each send a request of the largest size, all but
        # its last byte: 31 fit in the uid's 2 MiB and one is refused,
        # whichever the service reads last; the 31 are then signed.
        msg, image = request("small", pad=LIMIT), open(f"{WORK}/small.ko", "rb").read()
        held = []
        for _ in range(32):
            s = connect()
            send(s, msg, memfd(image), cut=1)   # one byte is still to come
            held.append(s)
        ready, _, _ = select.select(held, [], [], 8)
        assert len(ready) == 1, len(ready)
        a = answer(ready[0])
        print("refused:", a)
        assert a and not a["ok"] and "the limit is 2097152 a uid" in a["error"], a
        held.remove(ready[0])
        for s in held:
            s.sendall(msg[-1:])
        values = [sig(answer(s)) for s in held]
        assert values == [open(f"{WORK}/small.value", "rb").read()] * 31, values


main(sys.argv[4])
PY
client() { python3 "$WORK/client.py" "$sock" "$WORK" "$service_pid" "$@"; }

check "a module sent with its request is signed" client small
check "... and its signature is the key's own, byte for byte" bash -c "
    '$REPROSIGN' sign --finish '$WORK/small.req' --signature '$WORK/small.value' --detached --output '$WORK/small.sig' &&
    cmp '$WORK/small.sig' '$WORK/small.ref'"
check "the largest section table the kernel reads (65535 entries) is signed" client big
check "... byte for byte" bash -c "
    '$REPROSIGN' sign --finish '$WORK/big.req' --signature '$WORK/big.value' --detached --output '$WORK/big.sig' &&
    cmp '$WORK/big.sig' '$WORK/big.ref'"
check "e_shentsize 8192 in a sparse memfd is refused, and the service's peak memory stays" client shentsize=8192
check "e_shentsize 65535 (4 GiB of table) likewise" client shentsize=65535
check "a request of exactly 64 KiB is signed" client largest-request
check "a request of 64 KiB and one byte is refused" client request-over
check "a request of 256 JSON values is signed" client values=256
check "a request of 257 JSON values is refused" client values=257
# The file a request names is the client's claim: at most 1024 bytes, and
# written escaped, under "client", to the log and the journal.
check "a request naming a file of 1024 bytes is signed" client claim=1024
check "one of 1025 bytes is refused" client claim=1025
check "the log keeps the name under client.claimed_path, escaped, and no path of its own" python3 -c "
import json, subprocess, sys
e = [json.loads(l) for l in subprocess.run([sys.executable, '$TESTS_DIR/interop/tlog_entries.py', '$WORK/log'],
     capture_output=True, text=True, check=True).stdout.splitlines()]
claims = [x['client'].get('claimed_path', '') for x in e if 'client' in x]
want = 'x.ko\\\\x0asocket:\\\\x20uid\\\\x200'
hit = [p for p in claims if p.startswith(want)]
assert len(hit) == 1, claims
assert '\\\\xe2\\\\x80\\\\xae' in hit[0] and all(0x21 <= ord(ch) < 0x7f for ch in hit[0]), hit[0]
assert not any('path' in x for x in e), e
"
check "no line of the service's journal starts with the forged text" bash -c "! grep -q '^socket: uid 0 pid 1' '$WORK/service.log'"
check "... where the claim is written escaped" grep -q 'signed module claimed x.ko\\x0asocket:' "$WORK/service.log"
check "31 requests of 64 KiB held at once by one uid are signed, a 32nd refused" client per-uid
check "the service still runs" kill -0 "$service_pid"
finish

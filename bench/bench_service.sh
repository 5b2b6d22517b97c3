#!/bin/bash
# Socket signing throughput of the signing service (signatures/s with 1, 8
# and 50 concurrent clients) against one process signing the same digests
# as a batch with the same key. Goal: at 8 clients, at least 80% of batch.
# Then a kernel flavour signed with sign-template --via against
# sign-template with the key (files/s, whole runs). Each row also gives a
# request's latency through the socket (median and 99th percentile, the
# medians over the rounds) and how many requests shared a checkpoint of
# the log (the service's own count, over the row).
#   bench/bench_service.sh [BUILD-DIR] [SIGNATURES]     (env: ROUNDS, BENCH_DIR, FIXTURES, PARTS)
set -euo pipefail
build=${1:-build}
n=${2:-2000}
src=$(cd "$(dirname "$0")/.." && pwd)
reprosign=$build/reprosign
helper=$build/bench_service_sign
fixtures=$(realpath -m -- "${FIXTURES:-$src/build/fixtures}")
file=$fixtures/root/shim-unsigned/usr/lib/shim/fbx64.efi
for h in "$helper" "$build/bench_service_parts" "$build/bench_roundtrip"; do
    [ -x "$h" ] || { echo "build $h first" >&2; exit 1; }
done
[ -f "$file" ] || { echo "run the tests once to fetch the shim fixtures" >&2; exit 1; }
# BENCH_DIR picks the file system (the log syncs each batch of entries).
work=$(mktemp -d -p "${BENCH_DIR:-/tmp}")
pid=
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
openssl req -new -x509 -newkey rsa:2048 -nodes -sha256 -days 30 -subj "/CN=bench" \
    -keyout "$work/k.pem" -out "$work/c.pem" 2>/dev/null
# One key per sig_type, as the service requires.
openssl req -new -x509 -newkey rsa:2048 -nodes -sha256 -days 30 -subj "/CN=bench modules" \
    -keyout "$work/mk.pem" -out "$work/mc.pem" 2>/dev/null
mkdir -p "$work/out"
cat >"$work/config.json" <<JSON
{"archive": "$work/none", "requests": "$work/none.json", "allow_unsigned_archive": true, "output": "$work/out", "log": "$work/log",
 "keys": {"efi": {"key": "$work/k.pem", "cert": "$work/c.pem"},
          "linux-module": {"key": "$work/mk.pem", "cert": "$work/mc.pem"}},
 "socket": {"path": "$work/s", "allow_uids": [$(id -u)]}, "poll_interval": 3600}
JSON
"$reprosign" service init --state "$work/state" --config "$work/config.json"
# A service for each row: when it stops it says how the row's requests
# shared checkpoints ("log: ... appends a checkpoint ..."), the column
# "per ckpt" (a service without that line prints "-").
start_service() {
    "$reprosign" service run --state "$work/state" 2>"$work/service.log" &
    pid=$!
    for _ in $(seq 100); do [ -S "$work/s" ] && break; sleep 0.1; done
}
stop_service() {
    kill "$pid" && wait "$pid" || true
    pid=
    sed -n 's/.*log: .* checkpoints: \([0-9.]*\) appends a checkpoint.*/\1/p' "$work/service.log" | tail -1 | grep . || echo -
}

# This VM's RSA speed drifts by a third from one minute to the next, so
# each socket run is paired with a batch run just before it, and the
# median over ROUNDS pairs is reported.
rounds=${ROUNDS:-5}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
printf 'RSA-2048, %d signatures a run, %d cores, median of %d runs each paired with a batch run\n' \
    "$n" "$(nproc)" "$rounds"
printf '%-34s %10s %10s %8s %8s %8s %9s\n' "" "sig/s" "batch" "ratio" "p50 ms" "p99 ms" "per ckpt"
# Each client waits for every answer before its next request; then, at 8
# clients, each keeps two requests in flight (rs_client_send ahead of
# rs_client_receive), so the service finds the next one waiting.
for run in "1 1" "8 1" "50 1" "8 2"; do
    read -r c w <<<"$run"
    : >"$work/pairs"
    start_service
    for _ in $(seq "$rounds"); do
        b=$("$helper" "$work/k.pem" "$work/c.pem" "$file" - 0 "$n")
        read -r r p50 p99 <<<"$("$helper" "$work/k.pem" "$work/c.pem" "$file" "$work/s" "$c" "$n" "$w")"
        echo "$r $b $(echo "scale=4; 100 * $r / $b" | bc) ${p50:-0} ${p99:-0}" >>"$work/pairs"
    done
    per=$(stop_service)
    label="socket, $c client(s)"
    [ "$w" = 1 ] || label="$label, $w in flight"
    printf '%-34s %10.0f %10.0f %7.0f%% %8.2f %8.2f %9s\n' "$label" "$(cut -d' ' -f1 "$work/pairs" | median)" \
        "$(cut -d' ' -f2 "$work/pairs" | median)" "$(cut -d' ' -f3 "$work/pairs" | median)" \
        "$(cut -d' ' -f4 "$work/pairs" | median)" "$(cut -d' ' -f5 "$work/pairs" | median)" "$per"
done

# A whole kernel flavour (its vmlinuz and every module) through the
# socket: sign-template --via, one process with a connection per worker,
# against sign-template with the key itself, each pair run back to back.
# Both digest the same 100 MB, so this is the socket's share of a real job.
bash "$src/tests/fetch-fixtures.sh" "$fixtures" kernel >/dev/null
kroot=$(readlink -f "$fixtures/kernel")
pkg=$(basename "$kroot")
mkdir -p "$work/pkgs"
ln -s "$kroot" "$work/pkgs/$pkg"
(cd "$kroot" && find boot/vmlinuz-* lib/modules -type f \( -name 'vmlinuz-*' -o -name '*.ko' \) | sort) |
    python3 -c "
import json, sys
files = [l.strip() for l in sys.stdin if l.strip()]
print(json.dumps({'$pkg': {'files': [
    {'sig_type': 'efi' if 'vmlinuz' in f else 'linux-module', 'file': f} for f in files]}}))" >"$work/files.json"
nfiles=$(python3 -c "import json; print(len(json.load(open('$work/files.json'))['$pkg']['files']))")
# The kernel's signature carries a signingTime: one fixed time for both, so
# their tarballs can be compared byte for byte.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(date +%s)}
: >"$work/pairs"
start_service
for _ in $(seq "$rounds"); do
    rm -rf "$work/tk" "$work/tv"
    t0=$(date +%s.%N)
    "$reprosign" sign-template "$work/files.json" --packages "$work/pkgs" --key "$work/k.pem" --cert "$work/c.pem" \
        --module-key "$work/mk.pem" --module-cert "$work/mc.pem" \
        --output "$work/tk" --quiet
    t1=$(date +%s.%N)
    "$reprosign" sign-template "$work/files.json" --packages "$work/pkgs" --via "$work/s" --cert "$work/c.pem" \
        --module-cert "$work/mc.pem" \
        --output "$work/tv" --quiet
    t2=$(date +%s.%N)
    cmp -s "$work/tk/signatures.tar.gz" "$work/tv/signatures.tar.gz" || { echo "--via gave other signatures" >&2; exit 1; }
    echo "$nfiles $t0 $t1 $t2" | awk '{k = $1 / ($3 - $2); v = $1 / ($4 - $3); printf "%.1f %.1f %.2f\n", v, k, 100 * v / k}' \
        >>"$work/pairs"
done
per=$(stop_service)
printf '%-34s %10.0f %10.0f %7.0f%% %8s %8s %9s\n' "sign-template --via, $nfiles files" "$(cut -d' ' -f1 "$work/pairs" | median)" \
    "$(cut -d' ' -f2 "$work/pairs" | median)" "$(cut -d' ' -f3 "$work/pairs" | median)" - - "$per"
"$reprosign" log verify "$work/log" --vkey "$work/state/log.vkey" | head -1

# What the rows above cannot show: each step of one request alone, on one
# thread with no socket, against the steps of one batch signature. The
# gap between that share and the 8-client row is the round trips' cost,
# and the last line is what one round trip costs on this machine.
# PARTS=0 leaves it out: its log step makes 15,000 checkpoints, minutes
# on a disk.
[ "${PARTS:-1}" = 0 ] && exit 0
echo
"$build/bench_service_parts" "$work/k.pem" "$work/c.pem" "$file" "$work/parts-log"
"$build/bench_roundtrip"

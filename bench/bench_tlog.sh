#!/bin/bash
# The transparency log at scale: a synthetic tile log of N entries of
# about 100 bytes, built by the appender with one checkpoint per 1,000
# entries, and the same operations on the former JSONL log of OLD_N
# entries (bench_tlog_jsonl), in the same run. Each timed operation is a
# whole process (what a user runs), the median of RUNS runs; RSS is the
# peak of one run (GNU time).
#
# usage: bench/bench_tlog.sh [N] [OLD_N]      (default 10000000 500000)
# env:   BUILD (default build), WORK (default a new directory under /tmp,
#        removed at the end unless KEEP=1), RUNS (default 20)
set -euo pipefail

n=${1:-10000000}
old_n=${2:-500000}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
reprosign=$build/reprosign
jsonl=$build/bench_tlog_jsonl
runs=${RUNS:-20}
work=${WORK:-$(mktemp -d /tmp/bench_tlog.XXXXXX)}
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$work"' EXIT
[[ -x $reprosign && -x $jsonl ]] || { echo "bench_tlog: build first ($build)" >&2; exit 1; }

# stream FIRST COUNT: entries of about 100 bytes, one a line.
stream() {
    python3 -c "
import sys
w = sys.stdout.write
for i in range($1, $1 + $2):
    w('{\"d\":\"sha256:%064x\",\"i\":%d}\n' % (i * 7919, i))"
}

# ms CMD...: the median wall time of RUNS runs, in milliseconds.
ms() {
    python3 - "$runs" "$@" <<'PY'
import statistics, subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2:]
t = []
for _ in range(runs):
    s = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL, check=True)
    t.append((time.perf_counter() - s) * 1000)
print('%.1f' % statistics.median(t))
PY
}
rss() { /usr/bin/time -f %M "$@" </dev/null 2>&1 >/dev/null | tail -1; }
row() { printf '%-44s %12s %12s\n' "$@"; }

"$reprosign" log keygen bench.example/reprosign --output "$work/log" >/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/old.key" -out "$work/old.crt" -subj /CN=bench-old-log \
    -days 30 2>/dev/null

# ---- the tile log: built in two halves, the first checkpoint kept ----
half=$((n / 2))
t0=$(date +%s.%N)
stream 0 "$half" | "$reprosign" log append "$work/tiles" --key "$work/log.key" --batch 1000 >/dev/null
cp "$work/tiles/checkpoint" "$work/half-checkpoint"
stream "$half" $((n - half)) | "$reprosign" log append "$work/tiles" --key "$work/log.key" --batch 1000 >/dev/null
t1=$(date +%s.%N)
append_rate=$(echo "$n / ($t1 - $t0)" | bc)
"$reprosign" log prove "$work/tiles" $((n / 3)) >"$work/proof"
stream $((n / 3)) 1 | tr -d '\n' >"$work/entry"
tile_bytes=$(du -sb "$work/tiles/tile" | cut -f1)
index_bytes=$(du -sb "$work/tiles/leaf-index" | cut -f1)

# ---- the JSONL log ----
t0=$(date +%s.%N)
"$jsonl" build "$work/jsonl" "$old_n" "$work/old.key" "$work/old.crt"
t1=$(date +%s.%N)
old_append_rate=$(echo "$old_n / ($t1 - $t0)" | bc)
old_bytes=$(du -sb "$work/jsonl" | cut -f1)

echo "# transparency log: tile log of $n entries, JSONL log of $old_n entries; median of $runs runs"
row "operation" "tiles $n" "JSONL $old_n"
row "log prove (ms)" "$(ms "$reprosign" log prove "$work/tiles" $((n / 3)))" \
    "$(ms "$jsonl" prove "$work/jsonl" "$work/old.crt" $((old_n / 3)))"
row "log prove peak RSS (KiB)" "$(rss "$reprosign" log prove "$work/tiles" $((n / 3)))" \
    "$(rss "$jsonl" prove "$work/jsonl" "$work/old.crt" $((old_n / 3)))"
row "log prove --entry (ms)" "$(ms "$reprosign" log prove "$work/tiles" --entry "$work/entry")" "-"
row "log verify-proof (ms)" \
    "$(ms "$reprosign" log verify-proof --vkey "$work/log.vkey" --entry "$work/entry" "$work/proof")" "-"
row "log consistency (ms)" "$(ms "$reprosign" log consistency "$work/tiles" "$work/half-checkpoint" --vkey "$work/log.vkey")" \
    "$(ms "$jsonl" consistency "$work/jsonl" "$work/old.crt" $((old_n / 2)) "$old_n")"
# What service start does with the log: open it for appending (the
# checkpoint, its signature and the right edge); an empty append is that.
row "log open, as service start (ms)" "$(ms "$reprosign" log append "$work/tiles" --key "$work/log.key")" \
    "$(ms "$jsonl" open "$work/jsonl" "$work/old.key" "$work/old.crt")"
# And the service itself, on that log with nothing to do: open, pass, close.
mkdir -p "$work/svc/archive" "$work/svc/out"
cat >"$work/svc/config.json" <<JSON
{"archive": "$work/svc/archive", "requests": "$work/svc/requests.json", "allow_unsigned_archive": true,
 "keys": {"efi": {"key": "$work/old.key", "cert": "$work/old.crt"}},
 "log_key": "$work/log.key", "output": "$work/svc/out", "log": "$work/tiles"}
JSON
"$reprosign" service init --state "$work/svc/state" --config "$work/svc/config.json"
row "service run --once, nothing to do (ms)" "$(ms "$reprosign" service run --state "$work/svc/state" --once)" \
    "(open above)"
row "log open peak RSS (KiB)" "$(rss "$reprosign" log append "$work/tiles" --key "$work/log.key")" \
    "$(rss "$jsonl" open "$work/jsonl" "$work/old.key" "$work/old.crt")"
t0=$(date +%s.%N); "$reprosign" log verify "$work/tiles" --vkey "$work/log.vkey" >/dev/null; t1=$(date +%s.%N)
o0=$(date +%s.%N); "$jsonl" verify "$work/jsonl" "$work/old.crt"; o1=$(date +%s.%N)
row "log verify, full audit (entries/s)" "$(echo "$n / ($t1 - $t0)" | bc)" "$(echo "$old_n / ($o1 - $o0)" | bc)"
row "log verify peak RSS (KiB)" "$(rss "$reprosign" log verify "$work/tiles" --vkey "$work/log.vkey")" \
    "$(rss "$jsonl" verify "$work/jsonl" "$work/old.crt")"
row "append, a checkpoint per 1,000 (entries/s)" "$append_rate" "$old_append_rate"
row "on-disk bytes per entry" "$(echo "scale=1; $tile_bytes / $n" | bc)" "$(echo "scale=1; $old_bytes / $old_n" | bc)"
row "  + leaf index (prove --entry)" "$(echo "scale=1; $index_bytes / $n" | bc)" "-"

#!/bin/bash
# Signs every module of the kernel fixture twice in the same run: once
# with one `reprosign sign` per module, once with one scripts/sign-file
# per module, and prints both times and their ratio. Same key (a fresh
# RSA-2048 test key), same hash (sha256), same unsigned inputs.
#
# usage: bench/bench_modules.sh [REPROSIGN] [FIXTURES]
# defaults: build/reprosign, build/fixtures (tests/fetch-fixtures.sh kernel)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
reprosign=${1:-$root/build/reprosign}
fixtures=${2:-$root/build/fixtures}
sign_file=/usr/lib/linux-kbuild-6.1/scripts/sign-file

[ -x "$reprosign" ] || { echo "bench_modules: $reprosign not built" >&2; exit 1; }
[ -x "$sign_file" ] || { echo "bench_modules: $sign_file missing (linux-kbuild-6.1)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mapfile -t modules < <(find "$fixtures"/kernel/lib/modules/*/kernel -name '*.ko' | sort)
[ "${#modules[@]}" -gt 0 ] || { echo "bench_modules: no modules under $fixtures/kernel" >&2; exit 1; }

openssl req -new -x509 -newkey rsa:2048 -nodes -sha256 -days 30 -subj "/CN=bench" \
    -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null

# Both tools sign the same unsigned bytes (sign-file would happily sign
# a signed module a second time; reprosign refuses).
mkdir "$work/in" "$work/ours" "$work/theirs"
for i in "${!modules[@]}"; do
    "$reprosign" strip "${modules[$i]}" --output "$work/in/$i.ko"
done
bytes=$(du -sb "$work/in" | cut -f1)

# Times from bash's own clock: a `date` process per reading would add
# about a millisecond of fork and exec inside every interval.
export LC_NUMERIC=C   # EPOCHREALTIME's decimal point

start=$EPOCHREALTIME
for i in "${!modules[@]}"; do
    "$reprosign" sign --key "$work/key.pem" --cert "$work/cert.pem" --output "$work/ours/$i.ko" "$work/in/$i.ko"
done
ours=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')

start=$EPOCHREALTIME
for i in "${!modules[@]}"; do
    "$sign_file" sha256 "$work/key.pem" "$work/cert.pem" "$work/in/$i.ko" "$work/theirs/$i.ko"
done
theirs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')

# A benchmark of wrong output would be worthless.
diff -rq "$work/ours" "$work/theirs" >/dev/null || { echo "bench_modules: outputs differ from sign-file" >&2; exit 1; }

n=${#modules[@]}
echo "modules:    $n ($((bytes / 1048576)) MiB unsigned)"
awk -v t="$ours" -v n="$n" 'BEGIN { printf "reprosign:  %.3f s  (%.2f ms/module)\n", t, 1000 * t / n }'
awk -v t="$theirs" -v n="$n" 'BEGIN { printf "sign-file:  %.3f s  (%.2f ms/module)\n", t, 1000 * t / n }'
awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "ratio:      reprosign takes %.2fx the time of sign-file\n", a / b }'
echo "outputs:    byte-identical"

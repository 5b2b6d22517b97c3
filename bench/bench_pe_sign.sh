#!/bin/bash
# Times `reprosign sign` against `sbsign` on the Debian kernel image (about
# 14 MB), alternating the two so drift in machine load hits both alike,
# and sets the medians beside the physical floor: one SHA-256 pass over
# the bytes at `openssl speed` rate plus one RSA-2048 signature.
#
# usage: bench/bench_pe_sign.sh [RUNS]     (default 11 of each)
# env:   REPROSIGN (default build/reprosign), FIXTURES (default build/fixtures),
#        BENCH_DIR: where images are written (default: a fresh directory in
#        /dev/shm when it exists, so the disk is not what is measured;
#        reprosign fsyncs its output, sbsign does not).
set -euo pipefail

runs=${1:-11}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "usage: bench/bench_pe_sign.sh [RUNS]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
reprosign=${REPROSIGN:-$root/build/reprosign}
fixtures=${FIXTURES:-$root/build/fixtures}
for tool in "$reprosign" sbsign openssl /usr/bin/time; do
    [[ -x $(command -v "$tool") ]] || { echo "bench: $tool not found or not executable" >&2; exit 1; }
done
shopt -s nullglob
kernels=("$fixtures"/kernel/boot/vmlinuz-*)
(( ${#kernels[@]} )) || { echo "bench: no kernel under $fixtures/kernel/boot" >&2; exit 1; }
kernel=${kernels[0]}

if [[ -n ${BENCH_DIR:-} ]]; then
    mkdir -p "$BENCH_DIR"
    dir=$(mktemp -d "$BENCH_DIR/bench-pe-sign.XXXXXX")
elif [[ -d /dev/shm && -w /dev/shm ]]; then
    dir=$(mktemp -d /dev/shm/bench-pe-sign.XXXXXX)
else
    dir=$(mktemp -d)
fi
trap 'rm -rf "$dir"' EXIT

# The image as a signer receives it: Debian's signature removed.
if ! "$reprosign" strip --output "$dir/vmlinuz" "$kernel" 2>/dev/null; then
    cp "$kernel" "$dir/vmlinuz"
fi
size=$(stat -c %s "$dir/vmlinuz")
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/key.pem" -out "$dir/cert.pem" -days 1 \
    -subj "/CN=bench throwaway" 2>/dev/null

run() {
    local out=$dir/out.$1 t0 t1
    rm -f "$out"
    case $1 in
    reprosign) cmd=("$reprosign" sign --key "$dir/key.pem" --cert "$dir/cert.pem" --output "$out" "$dir/vmlinuz") ;;
    sbsign) cmd=(sbsign --key "$dir/key.pem" --cert "$dir/cert.pem" --output "$out" "$dir/vmlinuz") ;;
    esac
    t0=$(date +%s.%N)
    if ! /usr/bin/time -f '%U %S %M' -o "$dir/time.$1" "${cmd[@]}" >/dev/null 2>"$dir/err.$1"; then
        echo "bench: $1 failed: $(tail -n 3 "$dir/err.$1")" >&2
        exit 1
    fi
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{printf "%.6f\n", $2 - $1}' >>"$dir/wall.$1"
    cat "$dir/time.$1" >>"$dir/rusage.$1"
}

# One untimed run each warms the page cache and checks both work.
run reprosign; run sbsign
rm -f "$dir"/wall.* "$dir"/rusage.*
for ((i = 0; i < runs; i++)); do
    if (( i % 2 )); then run sbsign; run reprosign; else run reprosign; run sbsign; fi
done

# Both signed images must verify, or the timing means nothing.
for t in reprosign sbsign; do
    "$reprosign" verify --cert "$dir/cert.pem" "$dir/out.$t" >/dev/null ||
        { echo "bench: $t output does not verify" >&2; exit 1; }
done

median() { sort -g "$1" | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
col_median() { awk -v c="$2" '{print $c}' "$1" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
# /usr/bin/time counts CPU in 10 ms ticks; the mean over the runs is finer.
col_mean() { awk -v c="$2" '{s += $c} END {print s / NR}' "$1"; }

# The floor, measured now on this machine.
sha_kbps=$(openssl speed -seconds 2 -evp sha256 -bytes 16384 2>/dev/null | awk 'tolower($1) == "sha256" {sub("k", "", $2); print $2}')
rsa_sign=$(openssl speed -seconds 2 rsa2048 2>/dev/null | awk '/^rsa 2048 bits/ {sub("s", "", $4); print $4}')
floor=$(awk -v n="$size" -v k="$sha_kbps" -v r="$rsa_sign" 'BEGIN {printf "%.6f", n / (k * 1000) + r}')

echo "image: $(basename "$kernel") stripped, $size bytes; $runs runs each, alternating; outputs in $(dirname "$dir")"
echo "(wall: median/min/max of the runs; user, sys: mean CPU seconds per run)"
printf '%-24s %10s %10s %10s %9s %8s %8s %9s\n' "" "median s" "min s" "max s" "MB/s" "user s" "sys s" "maxRSS MB"
for t in reprosign sbsign; do
    m=$(median "$dir/wall.$t")
    printf '%-24s %10.4f %10.4f %10.4f %9.1f %8.3f %8.3f %9.1f\n' "$t" "$m" "$(sort -g "$dir/wall.$t" | head -n 1)" \
        "$(sort -g "$dir/wall.$t" | tail -n 1)" "$(awk -v n="$size" -v m="$m" 'BEGIN {print n / m / 1e6}')" \
        "$(col_mean "$dir/rusage.$t" 1)" "$(col_mean "$dir/rusage.$t" 2)" "$(awk -v k="$(col_median "$dir/rusage.$t" 3)" 'BEGIN {print k / 1024}')"
done
printf '%-24s %10.4f %10s %10s %9.1f\n' "floor (sha256 + rsa2048)" "$floor" "" "" \
    "$(awk -v n="$size" -v m="$floor" 'BEGIN {print n / m / 1e6}')"
printf 'sha256 %.0f MB/s, rsa2048 sign %.3f ms (openssl speed)\n' "$(awk -v k="$sha_kbps" 'BEGIN {print k / 1000}')" \
    "$(awk -v r="$rsa_sign" 'BEGIN {print r * 1000}')"
awk -v a="$(median "$dir/wall.reprosign")" -v b="$(median "$dir/wall.sbsign")" -v f="$floor" \
    'BEGIN {printf "ratio reprosign/sbsign %.2f; reprosign/floor %.2f; sbsign/floor %.2f\n", a / b, a / f, b / f}'

#!/bin/bash
# Signatures per second through a PKCS#11 token (SoftHSM2) against the same
# RSA-2048 key from a PEM file, for N module-sized (SHA-256) digests, one
# process per backend so session setup and login are paid once each.
#   bench/bench_pkcs11.sh [BUILD_DIR] [N] [ROUNDS]
# Goal: the token path costs at most 1.3x the file path. Beside it, a bare
# PKCS#11 loop (bench_pkcs11_raw: C_SignInit + C_Sign, no library in
# between) on the same token, on 1 and on 2 threads each with a session of
# its own: the least any client can pay, so the difference between it and
# the token line at the same parallelism is reprosign's own cost (goal: at
# most 1.05x), in wall time and in CPU time (which a loaded machine
# disturbs less). ROUNDS (default 5) rounds run the four token measurements
# one after another; the medians of each round's own ratios are reported,
# since the machine's speed drifts between rounds.
set -euo pipefail

build=${1:-$(dirname "$0")/../build}
n=${2:-1000}
rounds=${3:-5}
helper=$build/bench_pkcs11_sign
raw=$build/bench_pkcs11_raw
[ -x "$helper" ] && [ -x "$raw" ] || { echo "bench_pkcs11: build $helper and $raw first" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/softhsm_token.sh"
softhsm_token "$work"

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
sign_s() { cut -d' ' -f2,5; }   # wall and CPU seconds of the signing

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
read -r pem_open pem_sign pem_total pem_rate _ < <("$helper" "$work/key.pem" "$work/cert.pem" "$n")
read -r tok_open tok_sign tok_total tok_rate _ < <("$helper" "$uri" "$work/cert.pem" "$n")
: >"$work/rounds"
for ((r = 0; r < rounds; r++)); do
    raw1=$("$raw" "$module" bench bench "$work/pin" "$n" 1 | sign_s)
    tok1=$("$helper" "$uri" "$work/cert.pem" "$n" 1 | sign_s)
    raw2=$("$raw" "$module" bench bench "$work/pin" "$n" 2 | sign_s)
    tok2=$("$helper" "$uri" "$work/cert.pem" "$n" 2 | sign_s)
    echo "${raw1% *} ${tok1% *} ${raw2% *} ${tok2% *} ${raw1#* } ${tok1#* } ${raw2#* } ${tok2#* }" >>"$work/rounds"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

printf '%-8s %10s %10s %10s %12s\n' backend open_s sign_s total_s sigs_per_s
printf '%-8s %10.4f %10.4f %10.4f %12.1f\n' pem "$pem_open" "$pem_sign" "$pem_total" "$pem_rate"
printf '%-8s %10.4f %10.4f %10.4f %12.1f\n' pkcs11 "$tok_open" "$tok_sign" "$tok_total" "$tok_rate"
awk -v a="$tok_sign" -v b="$pem_sign" -v c="$tok_total" -v d="$pem_total" -v n="$n" 'BEGIN {
    printf "ratio (token/file, %d RSA-2048 signatures): signing %.2fx, including setup %.2fx (goal <= 1.3x)\n",
        n, a / b, c / d }'
echo "signing seconds per round (bare-p11 1 thread, reprosign 1, bare-p11 2 threads, reprosign 2;"
echo "then the CPU seconds of the same four):"
sed 's/^/  /' "$work/rounds"
col() { awk "{print $1}" "$work/rounds" | median; }
printf 'medians over %d rounds of each round'"'"'s ratios:\n' "$rounds"
printf '  reprosign through the token / a bare PKCS#11 loop, 1 thread:  %.3fx\n' "$(col '$2/$1')"
printf '  reprosign through the token / a bare PKCS#11 loop, 2 threads: %.3fx (goal <= 1.05x)\n' "$(col '$4/$3')"
printf '  the same in CPU time, 1 thread: %.3fx; 2 threads: %.3fx\n' "$(col '$6/$5')" "$(col '$8/$7')"
printf '  2 threads against 1, reprosign: %.2fx; bare PKCS#11 loop: %.2fx\n' "$(col '$2/$4')" "$(col '$1/$3')"

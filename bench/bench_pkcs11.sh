#!/bin/bash
# Signatures per second through a PKCS#11 token (SoftHSM2) against the same
# RSA-2048 key from a PEM file, for N module-sized (SHA-256) digests, one
# process per backend so session setup and login are paid once each.
#   bench/bench_pkcs11.sh [BUILD_DIR] [N]
# Goal: the token path costs at most 1.3x the file path. A third line is a
# bare PKCS#11 loop (bench_pkcs11_raw: C_SignInit + C_Sign on one session,
# no library in between) on the same token: the least any client can pay,
# so the difference between it and the token line is reprosign's own cost.
set -euo pipefail

build=${1:-$(dirname "$0")/../build}
n=${2:-1000}
helper=$build/bench_pkcs11_sign
raw=$build/bench_pkcs11_raw
module=/usr/lib/softhsm/libsofthsm2.so
[ -x "$helper" ] && [ -x "$raw" ] || { echo "bench_pkcs11: build $helper and $raw first" >&2; exit 1; }
[ -e "$module" ] || { echo "bench_pkcs11: SoftHSM2 ($module) is not installed" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/tokens"
printf 'directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n' "$work/tokens" >"$work/softhsm2.conf"
export SOFTHSM2_CONF=$work/softhsm2.conf
softhsm2-util --init-token --free --label bench --pin 1234 --so-pin 5678 >/dev/null
openssl req -new -x509 -newkey rsa:2048 -nodes -sha256 -days 30 -subj /CN=bench \
    -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
openssl pkey -in "$work/key.pem" -outform DER -out "$work/key.der"
pkcs11-tool --module "$module" --token-label bench --login --pin 1234 \
    --write-object "$work/key.der" --type privkey --id 01 --label bench >/dev/null 2>&1
printf '1234\n' >"$work/pin"
uri="pkcs11:token=bench;object=bench;type=private?module-path=$module&pin-source=file:$work/pin"

read -r pem_open pem_sign pem_total pem_rate < <("$helper" "$work/key.pem" "$work/cert.pem" "$n")
read -r tok_open tok_sign tok_total tok_rate < <("$helper" "$uri" "$work/cert.pem" "$n")
read -r raw_open raw_sign raw_total raw_rate < <("$raw" "$module" bench bench "$work/pin" "$n")

printf '%-8s %10s %10s %10s %12s\n' backend open_s sign_s total_s sigs_per_s
printf '%-8s %10.4f %10.4f %10.4f %12.1f\n' pem "$pem_open" "$pem_sign" "$pem_total" "$pem_rate"
printf '%-8s %10.4f %10.4f %10.4f %12.1f\n' pkcs11 "$tok_open" "$tok_sign" "$tok_total" "$tok_rate"
printf '%-8s %10.4f %10.4f %10.4f %12.1f\n' bare-p11 "$raw_open" "$raw_sign" "$raw_total" "$raw_rate"
awk -v a="$tok_sign" -v b="$pem_sign" -v c="$tok_total" -v d="$pem_total" -v n="$n" 'BEGIN {
    printf "ratio (token/file, %d RSA-2048 signatures): signing %.2fx, including setup %.2fx (goal <= 1.3x)\n",
        n, a / b, c / d }'
awk -v a="$tok_sign" -v b="$raw_sign" 'BEGIN {
    printf "reprosign through the token / a bare PKCS#11 loop on the same token: %.2fx\n", a / b }'

#!/bin/bash
# Writes the first certificate of shim's .vendor_cert section (the CA shim
# trusts) as DER: vendor-cert.sh SHIM.efi OUT.der
# The section starts with u32 authorized_size, u32 deauthorized_size,
# u32 authorized_offset, u32 deauthorized_offset (shim's cert_table).
set -euo pipefail
shim=$1 out=$2
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
objcopy -O binary --only-section=.vendor_cert "$shim" "$tmp"
read -r size off < <(od -An -t u4 -j 0 -N 16 "$tmp" | awk '{print $1, $3}')
[ "$size" -gt 0 ] || { echo "vendor-cert: $shim has no vendor certificate" >&2; exit 1; }
dd if="$tmp" bs=1 skip="$off" count="$size" status=none | openssl x509 -inform DER -outform DER -out "$out"

#!/bin/bash
# Builds small seed corpora for the fuzz targets from the Debian fixtures:
#   OUTDIR/fuzz_pe/            headers-only truncations and miniature
#                              (openable) PE images, unsigned and signed
#   OUTDIR/fuzz_authenticode/  detached signatures: Debian's own, and ones
#                              made with the fuzzers' test key
# Seeds are generated, never committed. Miniatures keep every header but
# cut each section to a few hundred bytes, so they fit a small -max_len
# while still opening, hashing and verifying.
#
# usage: tests/fuzz/make-seeds.sh OUTDIR
# env:   REPROSIGN (default build/reprosign), FIXTURES (default build/fixtures)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:?usage: make-seeds.sh OUTDIR}
reprosign=${REPROSIGN:-$root/build/reprosign}
fixtures=${FIXTURES:-$root/build/fixtures}
unsigned_dir=$fixtures/root/shim-unsigned/usr/lib/shim
signed_dir=$fixtures/root/shim-helpers-amd64-signed/usr/lib/shim

[[ -x $reprosign ]] || { echo "make-seeds: $reprosign not built" >&2; exit 1; }
shopt -s nullglob
unsigned=("$unsigned_dir"/*.efi)
signed=("$signed_dir"/*.efi.signed)
(( ${#unsigned[@]} && ${#signed[@]} )) || { echo "make-seeds: no fixtures under $fixtures (run tests/fetch-fixtures.sh)" >&2; exit 1; }

pe=$out/fuzz_pe
sig=$out/fuzz_authenticode
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$pe" "$sig"

# The test signer lives in fuzz_keys.h so the fuzzers' trust store and
# these seeds agree; pull the PEM out of the C string literals.
pem() {
    sed -n "/BEGIN $1/,/END $1/p" "$here/fuzz_keys.h" | sed -e 's/^ *"//' -e 's/\\n" *;\{0,1\}$//'
}
pem "PRIVATE KEY" >"$tmp/key.pem"
pem CERTIFICATE >"$tmp/cert.pem"

# Miniature of a PE image: headers unchanged, each section cut to at most
# 256 bytes and packed right after the headers, certificate table dropped
# (and optionally a given table appended, 8-aligned, as signers do).
miniature() {
    python3 - "$@" <<'PY'
import struct, sys
src, dst = sys.argv[1], sys.argv[2]
table = open(sys.argv[3], "rb").read() if len(sys.argv) > 3 else b""
d = open(src, "rb").read()
lfanew = struct.unpack_from("<I", d, 0x3c)[0]
nsec, optsize = struct.unpack_from("<H", d, lfanew + 6)[0], struct.unpack_from("<H", d, lfanew + 20)[0]
opt = lfanew + 24
magic = struct.unpack_from("<H", d, opt)[0]
ddir = opt + (112 if magic == 0x20b else 96)
soh = struct.unpack_from("<I", d, opt + 60)[0]
hdr = bytearray(d[:soh])
struct.pack_into("<II", hdr, ddir + 4 * 8, 0, 0)
body = b""
for i in range(nsec):
    s = opt + optsize + 40 * i
    size, off = struct.unpack_from("<II", hdr, s + 16)
    if size == 0:
        continue
    n = min(size, 256)
    struct.pack_into("<II", hdr, s + 16, n, soh + len(body))
    body += d[off:off + n]
img = bytes(hdr) + body
if table:
    img += b"\0" * (-len(img) % 8)
    struct.pack_into("<II", hdr, ddir + 4 * 8, len(img), len(table))
    img = bytes(hdr) + img[len(hdr):] + table
open(dst, "wb").write(img)
PY
}

# The raw certificate table of a signed image (DataDirectory[4]).
cert_table() {
    python3 - "$1" "$2" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
lfanew = struct.unpack_from("<I", d, 0x3c)[0]
opt = lfanew + 24
ddir = opt + (112 if struct.unpack_from("<H", d, opt)[0] == 0x20b else 96)
off, size = struct.unpack_from("<II", d, ddir + 32)
open(sys.argv[2], "wb").write(d[off:off + size])
PY
}

headers_only() {
    local soh
    soh=$(python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(4096); l=struct.unpack_from("<I",d,0x3c)[0]; print(struct.unpack_from("<I",d,l+24+60)[0])' "$1")
    head -c "$soh" "$1" >"$2"
}

for f in "${unsigned[@]}" "${signed[@]}"; do
    b=$(basename "$f")
    headers_only "$f" "$pe/headers-$b"
done

for f in "${unsigned[@]}"; do
    b=$(basename "$f" .efi)
    miniature "$f" "$pe/mini-$b.efi"
    for h in sha256 sha384; do
        SOURCE_DATE_EPOCH=1700000000 "$reprosign" sign --key "$tmp/key.pem" --cert "$tmp/cert.pem" --hash $h \
            --output "$pe/mini-$b.$h.signed" "$pe/mini-$b.efi" >/dev/null
        SOURCE_DATE_EPOCH=1700000000 "$reprosign" sign --key "$tmp/key.pem" --cert "$tmp/cert.pem" --hash $h \
            --detached --output "$sig/test-$b.$h.sig" "$pe/mini-$b.efi" >/dev/null
    done
    # Two signatures in one table.
    "$reprosign" sign --key "$tmp/key.pem" --cert "$tmp/cert.pem" --no-signing-time --hash sha512 \
        --output "$pe/mini-$b.double.signed" "$pe/mini-$b.sha256.signed" >/dev/null
done

# Debian's signatures: detached as they are, and grafted onto miniatures
# (the digest no longer matches, which is a case worth having too).
for f in "${signed[@]}"; do
    b=$(basename "$f" .efi.signed)
    "$reprosign" detach --output "$sig/debian-$b.sig" "$f" >/dev/null
    cert_table "$f" "$tmp/$b.table"
    miniature "$f" "$pe/mini-debian-$b.signed" "$tmp/$b.table"
done

# Offline-signing requests for the miniatures, PE and with every option.
req=$out/fuzz_offline
mkdir -p "$req"
for f in "$pe"/mini-*.efi; do
    b=$(basename "$f" .efi)
    SOURCE_DATE_EPOCH=1700000000 "$reprosign" sign --prepare-offline --cert "$tmp/cert.pem" \
        --output "$req/$b.json" "$f" >/dev/null
    "$reprosign" sign --prepare-offline --cert "$tmp/cert.pem" --hash sha512 --no-signing-time \
        --output "$req/$b.sha512.json" "$f" >/dev/null
done

echo "make-seeds: $(ls "$pe" | wc -l) PE seeds (largest $(wc -c "$pe"/* | sort -n | tail -2 | head -1 | awk '{print $1}') bytes)," \
     "$(ls "$sig" | wc -l) signature seeds in $out"

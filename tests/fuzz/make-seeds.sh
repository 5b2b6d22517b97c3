#!/bin/bash
# Builds small seed corpora for the fuzz targets from the Debian fixtures:
#   OUTDIR/fuzz_pe/            headers-only truncations and miniature
#                              (openable) PE images, unsigned and signed
#   OUTDIR/fuzz_authenticode/  detached signatures: Debian's own, and ones
#                              made with the fuzzers' test key
#   OUTDIR/fuzz_offline/       offline-signing requests for the miniatures
#   OUTDIR/fuzz_files_json/    files.json in each of Debian's three shapes
#   OUTDIR/fuzz_deb/           small real .debs, tiny ones dpkg-deb builds
#                              with each compression, hand-made hostile ones
#   OUTDIR/fuzz_sbat/          shim's .sbat sections, each followed by a NUL
#                              and a SbatLevel; shim's .vendor_cert section
# Seeds are generated, never committed. Miniatures keep every header but
# cut each section to a few hundred bytes, so they fit a small -max_len
# while still opening, hashing and verifying. Without the fixtures or the
# CLI, only the seeds that need neither are made (and the script succeeds).
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

shopt -s nullglob
unsigned=("$unsigned_dir"/*.efi)
signed=("$signed_dir"/*.efi.signed)
template_deb=("$fixtures"/debs/shim-helpers-amd64-signed-template_*.deb)

pe=$out/fuzz_pe
sig=$out/fuzz_authenticode
json=$out/fuzz_files_json
deb=$out/fuzz_deb
sbat=$out/fuzz_sbat
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$pe" "$sig" "$json" "$deb" "$sbat"

summary() {
    local t
    for t in "$out"/fuzz_*; do
        printf '%s %s, ' "$(ls "$t" | wc -l)" "${t##*/}"
    done
}

# files.json: the template's own ({"packages": ...}), the bare map,
# version 2 with fingerprints and modules, and two that must be refused.
if (( ${#template_deb[@]} )); then
    dpkg-deb --fsys-tarfile "${template_deb[0]}" | tar -xO --wildcards '*/files.json' >"$json/debian-template.json"
fi
cat >"$json/bare.json" <<'JSON'
{"shim-unsigned": {"trusted_certs": [], "files": [{"sig_type": "efi", "file": "usr/lib/shim/shimx64.efi"}]}}
JSON
cat >"$json/packages.json" <<'JSON'
{"packages": {"shim-unsigned": {"files": [{"sig_type": "efi", "file": "usr/lib/shim/fbx64.efi"},
 {"sig_type": "efi", "file": "usr/lib/shim/mmx64.efi"}]}}}
JSON
cat >"$json/version2.json" <<'JSON'
{"version": "2", "packages": {
 "linux-image-6.1.0-57-cloud-amd64-unsigned": {
  "trusted_certs": ["8E:1D:9F:4C:7F:7B:41:1A:58:A2:8C:DF:67:26:F1:2B:45:1C:4E:00:90:33:A6:4A:05:0E:9E:A0:63:26:47:7B",
                    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"],
  "files": [{"sig_type": "efi", "file": "boot/vmlinuz-6.1.0-57-cloud-amd64"},
            {"sig_type": "linux-module", "file": "lib/modules/6.1.0-57-cloud-amd64/kernel/fs/fat/fat.ko"}]},
 "fwupd-amd64-signed": {"files": []}}}
JSON
cat >"$json/escape.json" <<'JSON'
{"packages": {"evil": {"files": [{"sig_type": "efi", "file": "usr/../../etc/shadow"}, {"sig_type": "efi", "file": "/x"}]}}}
JSON
cat >"$json/bad-version.json" <<'JSON'
{"version": "3", "packages": {"p0": {"files": [{"sig_type": "pe", "file": "a\\b"}]}}}
JSON

# .debs: the real ones under 1 MB (the template fits -max_len whole; the
# others are cut, which still covers control.tar and a truncated data.tar).
for f in "$fixtures"/debs/*.deb; do
    if (( $(stat -c %s "$f") < 1024 * 1024 )); then
        cp "$f" "$deb/"
    fi
done
# A tiny signing template, built by dpkg-deb with each compression it
# offers, and once with links (which extraction must refuse).
tiny=$tmp/tiny
share=$tiny/usr/share/code-signing/tiny-signed-template
if command -v dpkg-deb >/dev/null; then
    mkdir -p "$tiny/DEBIAN" "$share/source-template/debian/source"
    printf 'Package: tiny-signed-template\nVersion: 1.0-1\nArchitecture: amd64\nMaintainer: nobody <nobody@example.org>\nDescription: fuzz seed\n' \
        >"$tiny/DEBIAN/control"
    cp "$json/packages.json" "$share/files.json"
    echo '3.0 (native)' >"$share/source-template/debian/source/format"
    printf '#!/usr/bin/make -f\n%%:\n\tdh $@\n' >"$share/source-template/debian/rules"
    chmod 0755 "$share/source-template/debian/rules"
    for z in gzip xz zstd none; do
        SOURCE_DATE_EPOCH=1700000000 dpkg-deb --root-owner-group -Z$z -b "$tiny" "$deb/tiny-$z.deb" >/dev/null
    done
    ln -s files.json "$share/link.json"
    ln "$share/files.json" "$share/source-template/hardlink.json"
    SOURCE_DATE_EPOCH=1700000000 dpkg-deb --root-owner-group -Zxz -b "$tiny" "$deb/tiny-links.deb" >/dev/null
fi
# Hand-made: the compressions dpkg-deb still reads but no longer writes,
# one dpkg does not know (lzop, which libarchive would run as a program),
# and entries that try to leave the extraction directory.
python3 - "$deb" <<'PY'
import bz2, gzip, io, lzma, sys, tarfile
out = sys.argv[1]

def tar(entries):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as t:
        for name, kind, arg in entries:
            ti = tarfile.TarInfo(name)
            ti.mtime = 1700000000
            if kind == "file":
                ti.size = len(arg)
                t.addfile(ti, io.BytesIO(arg))
                continue
            ti.type = {"dir": tarfile.DIRTYPE, "sym": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE,
                       "chr": tarfile.CHRTYPE, "fifo": tarfile.FIFOTYPE}[kind]
            ti.mode = 0o755 if kind == "dir" else 0o644
            ti.linkname = arg or ""
            t.addfile(ti)
    return buf.getvalue()

def ar(members):
    data = b"!<arch>\n"
    for name, body in members:
        data += b"%-16s%-12d%-6d%-6d%-8s%-10d`\n" % (name.encode(), 1700000000, 0, 0, b"100644", len(body))
        data += body + (b"\n" if len(body) % 2 else b"")
    return data

control = gzip.compress(tar([("./control", "file", b"Package: hand-made\nVersion: 1\nArchitecture: all\n")]), mtime=0)
normal = [("./", "dir", None), ("./usr/", "dir", None), ("./usr/share/", "dir", None),
          ("./usr/share/a.txt", "file", b"a\n"), ("./usr/lib/b.efi", "file", b"MZ" + bytes(62))]
hostile = {
    "dotdot": [("./usr/../../escape", "file", b"x"), ("./usr/a/../../../escape", "file", b"x")],
    "absolute": [("/usr/abs", "file", b"x"), ("/etc/escape", "file", b"x"), ("//usr//double", "file", b"x")],
    "symlink": [("./usr/l", "sym", "../../../../.."), ("./usr/l/escape", "file", b"x")],
    "hardlink": [("./usr/f", "file", b"x"), ("./usr/h", "hard", "/etc/passwd"), ("./usr/g", "hard", "./usr/f")],
    "special": [("./usr/dev", "chr", None), ("./usr/fifo", "fifo", None)],
    "duplicate": [("./usr/f", "file", b"x"), ("usr/f", "file", b"y")],
    "file-then-dir": [("./usr/f", "file", b"x"), ("./usr/f/g", "file", b"y")],
}

def deb(name, member, data):
    with open(f"{out}/{name}.deb", "wb") as f:
        f.write(ar([("debian-binary", b"2.0\n"), ("control.tar.gz", control), (member, data)]))

deb("hand-bzip2", "data.tar.bz2", bz2.compress(tar(normal)))
deb("hand-lzma", "data.tar.lzma", lzma.compress(tar(normal), format=lzma.FORMAT_ALONE))
# Uncompressed, without tar's padding to 10 KiB (dpkg-deb's is cut by -max_len).
raw = tar(normal).rstrip(b"\0")
deb("hand-none", "data.tar", raw + bytes(-len(raw) % 512 + 1024))
deb("hand-lzop", "data.tar.lzo", b"\x89LZO\x00\r\n\x1a\n" + bytes(32))
for name, entries in hostile.items():
    deb("hostile-" + name, "data.tar.gz", gzip.compress(tar(normal + entries), mtime=0))
PY

# SBAT: each real .sbat section (and a grub-like one), a NUL, then a
# level: shim's own .sbatlevel strings and the SbatLevel revisions of
# shim's SbatLevel_Variable.txt (the last one revokes shim,4).
levels=(
    'sbat,1,2021030218\n'
    'sbat,1,2022052400\ngrub,2\n'
    'sbat,1,2022111500\nshim,2\ngrub,3\n'
    'sbat,1,2023012900\nshim,2\ngrub,3\ngrub.debian,4\n'
    'sbat,1,2024010900\nshim,4\ngrub,3\ngrub.debian,4\n'
    'sbat,1,2024040900\nshim,4\ngrub,4\ngrub.peimage,2\n'
    'sbat,1,2099010100\nshim,5\n'
)
for i in "${!levels[@]}"; do
    printf '%b' "${levels[$i]}" >"$tmp/level-$i"
done
printf 'sbat,1,SBAT Version,sbat,1,https://github.com/rhboot/shim/blob/main/SBAT.md\ngrub,3,Free Software Foundation,grub,2.12,https://www.gnu.org/software/grub/\n' \
    >"$tmp/grub.sbat"
shim=$unsigned_dir/shimx64.efi
if [[ -e $shim ]] && command -v objcopy >/dev/null; then
    objcopy -O binary --only-section=.sbatlevel "$shim" "$tmp/sbatlevel"
    # u32 version, then the offsets of "previous" and "latest" from byte 4.
    python3 - "$tmp/sbatlevel" "$tmp" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
for name, off in zip(("previous", "latest"), struct.unpack_from("<II", d, 4)):
    open(f"{sys.argv[2]}/level-shim-{name}", "wb").write(d[4 + off:].split(b"\0")[0])
PY
    objcopy -O binary --only-section=.vendor_cert "$shim" "$sbat/vendor_cert-shimx64"
    for f in "${unsigned[@]}"; do
        objcopy -O binary --only-section=.sbat "$f" "$tmp/$(basename "$f" .efi).sbat"
    done
fi
for s in "$tmp"/*.sbat; do
    for l in "$tmp"/level-*; do
        { cat "$s"; printf '\0'; cat "$l"; } >"$sbat/$(basename "$s" .sbat)+$(basename "$l")"
    done
done

# The rest needs the CLI and the shim fixtures.
if [[ ! -x $reprosign ]] || (( ! ${#unsigned[@]} || ! ${#signed[@]} )); then
    echo "make-seeds: no $reprosign or no fixtures under $fixtures (tests/fetch-fixtures.sh): no PE seeds" >&2
    echo "make-seeds: $(summary)in $out"
    exit 0
fi

# The test signer lives in fuzz_keys.h so the fuzzers' trust store and
# these seeds agree; pull the PEM out of the C string literals.
pem() {
    sed -n "/BEGIN $1/,/END $1/p" "$here/fuzz_keys.h" | sed -e 's/^ *"//' -e 's/\\n" *;\{0,1\}$//'
}
pem "PRIVATE KEY" >"$tmp/key.pem"
chmod 0600 "$tmp/key.pem"
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

echo "make-seeds: $(summary)in $out (largest PE seed $(wc -c "$pe"/* | sort -n | tail -2 | head -1 | awk '{print $1}') bytes)"

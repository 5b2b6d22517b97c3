#!/bin/bash
# Builds small seed corpora for the fuzz targets from the Debian fixtures:
#   OUTDIR/fuzz_pe/            headers-only truncations and miniature
#                              (openable) PE images, unsigned and signed
#   OUTDIR/fuzz_authenticode/  detached signatures: Debian's own, and ones
#                              made with the fuzzers' test key
#   OUTDIR/fuzz_offline/       offline-signing requests for the miniatures,
#                              as files and in the socket's form
#   OUTDIR/fuzz_frames/        those requests framed as on the socket
#   OUTDIR/fuzz_archive_meta/  gpgv status lines and a Release header
#   OUTDIR/fuzz_files_json/    files.json in each of Debian's three shapes
#   OUTDIR/fuzz_deb/           small real .debs, tiny ones dpkg-deb builds
#                              with each compression, hand-made hostile ones
#   OUTDIR/fuzz_sbat/          shim's .sbat sections, each followed by a NUL
#                              and a SbatLevel; shim's .vendor_cert section
#   OUTDIR/fuzz_esl/           OVMF's PK/KEK/db/dbx lists, lists 'efi siglist'
#                              makes, pairs of equal-sized lists (the target
#                              merges the halves), 'efi sign-var' updates
#   OUTDIR/fuzz_varstore/      miniature OVMF_VARS*.fd stores, stores 'efi
#                              enroll' and 'efi apply' make, a few damaged
#   OUTDIR/fuzz_efivarfs/      efivarfs files (NAME-GUID, NUL, attributes
#                              word and data): OVMF's PK/KEK/db/dbx, flags
#   OUTDIR/fuzz_module/        gcc -c objects (64-, 32-bit, big-endian),
#                              signed and not, compressed; small real modules
#                              as Debian signed them, stripped, re-signed;
#                              detached module CMS signatures
#   OUTDIR/fuzz_note/          checkpoints of a log signed with the fuzz log
#                              key, one cosigned; key files
#   OUTDIR/fuzz_tlog_proof/    entry, NUL, its tlog-proof from that log
#   OUTDIR/fuzz_kernel_image/  synthetic bzImages and EFI zboot images each
#                              way Linux compresses them, an arm64 and a RISC-V
#                              Image, a payload uncompressed, the
#                              bytes around the certificate list of Debian's
#                              real kernels
#   OUTDIR/fuzz_requests/      '0' + requests.json, '1' + Release, '2' +
#                              Packages, '3' + service config (the first byte
#                              picks the parser, mod 4)
# Seeds are generated, never committed. Miniatures keep every header but
# cut each section to a few hundred bytes (PE) or the erased space of a
# variable store to 1 KiB, so they fit the default -max_len of 16384
# while still opening, hashing and verifying. Without the fixtures, the
# CLI, OVMF or a tool, only the seeds that need none of them are made
# (and the script succeeds).
#
# usage: tests/fuzz/make-seeds.sh OUTDIR
# env:   REPROSIGN (default build/reprosign), FIXTURES (default build/fixtures),
#        OVMF (default /usr/share/OVMF: OVMF_VARS*.fd, package ovmf)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:?usage: make-seeds.sh OUTDIR}
reprosign=${REPROSIGN:-$root/build/reprosign}
fixtures=${FIXTURES:-$root/build/fixtures}
ovmf=${OVMF:-/usr/share/OVMF}
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
req=$out/fuzz_offline
esl=$out/fuzz_esl
vars=$out/fuzz_varstore
mod=$out/fuzz_module
svc=$out/fuzz_requests
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$pe" "$sig" "$json" "$deb" "$sbat" "$req" "$esl" "$vars" "$mod" "$svc"
have_cli=false
[[ -x $reprosign ]] && have_cli=true

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
# fuzz_files_json reads its first byte as the length of its reads: each
# files.json seed gets one in front (the tiny template above has its own
# copy), a different one each.
n=0
for f in "$json"/*; do
    { printf "\\$(printf '%03o' $((n % 17)))"; cat "$f"; } >"$f.chunked" && mv "$f.chunked" "$f"
    n=$((n + 1))
done
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
    # Links the resolver follows inside the package, a loop, and an empty target.
    "symlink-inside": [("./usr/lib/c", "sym", "b.efi"), ("./usr/lib/d", "sym", "c"), ("./usr/libdir", "sym", "lib"),
                       ("./usr/loop", "sym", "loop"), ("./usr/empty", "sym", "")],
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

# The test signer lives in fuzz_keys.h so the fuzzers' trust store and
# these seeds agree; pull the PEM out of the C string literals.
pem() {  # pem TYPE [N]: the Nth (default first) PEM block of TYPE
    awk -v want="${2:-1}" "/BEGIN $1/ { n++ } n == want { print } n == want && /END $1/ { exit }" "$here/fuzz_keys.h" |
        sed -e 's/^ *"//' -e 's/\\n" *;\{0,1\}$//'
}
pem "PRIVATE KEY" >"$tmp/key.pem"
chmod 0600 "$tmp/key.pem"
pem CERTIFICATE >"$tmp/cert.pem"
pem CERTIFICATE 2 >"$tmp/module-cert.pem"

# Drops files whose bytes an earlier file (by name) already has.
dedupe() {
    local -A seen=()
    local f h
    for f in "$1"/*; do
        h=$(sha256sum <"$f")
        if [[ -n ${seen[${h%% *}]:-} ]]; then
            rm -f "$f"
        else
            seen[${h%% *}]=1
        fi
    done
}

# ---- fuzz_requests: the first byte picks the parser (mod 4); '0' to '3'
# are 0x30 to 0x33, so the seeds stay text. Hand-written first (no tools).
python3 - "$svc" <<'PY'
import hashlib, sys
out = sys.argv[1]

def seed(name, parser, text):
    with open(f"{out}/{name}", "wb") as f:
        f.write(b"0123"[parser:parser + 1] + (text.encode() if isinstance(text, str) else text))

def req(package, version, suite="bookworm", codename=None, source="shim", arch="amd64", extra=""):
    return (f'  {{"package": "{package}", "source": "{source}", "suite": "{suite}", '
            f'"codename": "{codename or suite}", "architecture": "{arch}", "version": "{version}"{extra}}}')

# dak's requests.json: plain, security with an embargo, epochs (':' becomes
# %3a in the id), then ones every field check must refuse.
seed("requests-dak.json", 0, '{"packages": [\n' + ",\n".join([
    req("shim-helpers-amd64-signed-template", "16.1-2~deb12u1"),
    req("shim-helpers-amd64-signed-template", "16.1-2~deb12u1+sec1", "bookworm-security", extra=', "embargoed": true'),
    req("linux-image-amd64-signed-template", "6.1.192-3", "stable-proposed-updates", "bookworm-proposed-updates", "linux"),
    req("grub-efi-amd64-signed-template", "2.06-13+deb12u1", source="grub2", extra=', "embargoed": false'),
    req("fwupd-arm64-signed-template", "1:1.8.12-3~bpo12+1", "bookworm-backports", source="fwupd", arch="arm64"),
]) + "\n]}\n")
seed("requests-empty.json", 0, '{"packages": []}\n')
seed("requests-bad-fields.json", 0, '{"packages": [\n' + ",\n".join([
    req("../../etc/passwd", "1.0-1"),
    req("shim", "1.0-1", ".hidden"),
    req("shim", "1.0-1", arch="AMD64"),
    req("shim", ":1.0", extra=', "embargoed": "yes"'),
]) + "\n]}\n")
seed("requests-bad-version.json", 0, '{"packages": [' + req("shim", "1:x.0/../1") + ']}\n')
seed("requests-duplicate-key.json", 0, '{"packages": [], "packages": [' + req("shim", "1") + ']}\n')
seed("requests-not-a-list.json", 0, '{"packages": {"shim": "16.1-2"}}\n')
seed("requests-missing.json", 0, '{"packages": [{"package": "shim", "version": "16.1-2", "suite": 7}]}\n')
seed("requests-array.json", 0, '[{"packages": []}]\n')
# Ids just under the 239 characters a request id may have (237 and 231):
# a long package name, and a version with many ':', each "%3a" in the id.
seed("requests-long-id.json", 0, '{"packages": [\n' + ",\n".join([
    req("a" * 225, "1.0-1"),
    req("a" * 170, "1:" + "1:1" * 10),
]) + "\n]}\n")

# Packages stanzas: the one the fuzzer asks for (shim-unsigned 16.1-2
# amd64), an "all" one, continuation lines, CRLF, and broken stanzas.
shim = """Package: shim-unsigned
Source: shim
Version: 16.1-2
Installed-Size: 3245
Maintainer: Debian EFI team <debian-efi@lists.debian.org>
Architecture: amd64
Depends: mokutil
Description: boot loader to chain-load signed boot loaders under Secure Boot
 This package provides a minimalist boot loader which allows verifying
 signatures of other UEFI binaries against either the Secure Boot DB/DBX or
 .
 against a built-in signature database.
Homepage: https://github.com/rhboot/shim
Description-md5: 8b4e2e6e0a5e2c5a1b46e3b0c6c1d8d7
Section: admin
Priority: optional
Filename: pool/main/s/shim/shim-unsigned_16.1-2_amd64.deb
Size: 1143484
MD5sum: 0d4c50061d0a04431586786ec65b0476
SHA256: {sha}
"""
template = """Package: shim-helpers-amd64-signed-template
Source: shim
Version: 16.1-2
Architecture: amd64
Filename: pool/main/s/shim/shim-helpers-amd64-signed-template_16.1-2_amd64.deb
Size: 11832
SHA256: 3f02c1ef6b94244d018c1a917b00099a3c50c8df75287f412c1d0273c3525fe3
"""
sha = hashlib.sha256(b"shim-unsigned").hexdigest()
packages = template + "\n" + shim.format(sha=sha)
seed("packages-shim.txt", 2, packages)
seed("packages-all.txt", 2, "# a comment\n" + shim.format(sha=sha).replace("Architecture: amd64", "Architecture: all"))
seed("packages-crlf.txt", 2, packages.replace("\n", "\r\n"))
seed("packages-escape.txt", 2, shim.format(sha=sha).replace("pool/main/s/shim/", "../../../etc/"))
seed("packages-no-sha256.txt", 2, shim.format(sha=sha[:63]).replace("Size: 1143484", "Size: 0x1000"))
seed("packages-broken.txt", 2, " continuation first\nPackage: shim-unsigned\nno colon here\n")

# A Release file vouching for those Packages, as dak and apt-ftparchive
# write one; then paths and hashes that must be refused.
def sums(files, algo, width):
    return "".join(f" {hashlib.new(algo, body.encode()).hexdigest()} {len(body):>{width}} {path}\n" for path, body in files)
files = [("main/binary-amd64/Packages", packages), ("main/binary-all/Packages", ""),
         ("main/binary-amd64/Release", "Archive: stable\nComponent: main\nArchitecture: amd64\n")]
head = """Origin: Debian
Label: Debian
Suite: stable
Version: 12.12
Codename: bookworm
Changelogs: https://metadata.ftp-master.debian.org/changelogs/@CHANGEPATH@_changelog
Date: Sat, 06 Sep 2025 09:30:54 UTC
Acquire-By-Hash: yes
No-Support-for-Architecture-all: Packages
Architectures: all amd64 arm64
Components: main contrib non-free-firmware
Description: Debian 12.12 Released 06 September 2025
"""
release = head + "MD5Sum:\n" + sums(files, "md5", 16) + "SHA256:\n" + sums(files, "sha256", 16)
seed("release-debian.txt", 1, release)
seed("release-crlf.txt", 1, release.replace("\n", "\r\n"))
seed("release-escape.txt", 1, head + "SHA256:\n" + sums([("../../../etc/passwd", "x"), ("/etc/shadow", "y")], "sha256", 8))
seed("release-bad-lines.txt", 1, head + "SHA256:\n " + "ab" * 31 + " 1 short\n " + "zz" * 32 + " 1 main/x\n "
     + "00" * 32 + " -1 main/y\n " + "00" * 32 + " 99999999999999999999 main/z\n " + "00" * 32 + " 1\n")
seed("release-two-paragraphs.txt", 1, release + "\n" + release)
seed("release-no-sha256.txt", 1, head + "MD5Sum:\n" + sums(files, "md5", 16))
seed("release-nul.txt", 1, head.encode() + b"SHA256:\n \0\n")

# The service configuration: bench/bench_service.sh's, one with every
# setting, then ones it must refuse.
seed("config-bench.json", 3, """{"archive": "/srv/reprosign/none", "requests": "/srv/reprosign/none.json", "allow_unsigned_archive": true, "output": "/srv/reprosign/out", "log": "/srv/reprosign/log",
 "keys": {"efi": {"key": "/srv/reprosign/k.pem", "cert": "/srv/reprosign/c.pem"}},
 "socket": {"path": "/srv/reprosign/s", "allow_uids": [1000]}, "poll_interval": 3600}
""")
seed("config-full.json", 3, """{
  "archive": "/srv/mirror/debian",
  "archive_keyring": "/usr/share/keyrings/debian-archive-keyring.gpg",
  "requests": "/srv/dak/signing/requests.json",
  "requests_signature": "/srv/dak/signing/requests.json.asc",
  "requests_keyring": "/etc/reprosign/dak.gpg",
  "keys": {"efi": {"key": "pkcs11:token=Debian%20Secure%20Boot;object=efi;type=private", "cert": "/etc/reprosign/efi.crt"},
           "linux-module": {"key": "/etc/reprosign/module.key", "cert": "pkcs11:token=Debian%20Secure%20Boot;object=module;type=cert"}},
  "log_key": "/etc/reprosign/log.key",
  "trusted_certs_allowlist": "/etc/reprosign/trusted-certs",
  "output": "/srv/reprosign/out",
  "log": "/srv/reprosign/log",
  "embargoed_suites": ["bookworm-security", "trixie-security"],
  "socket": {"path": "/run/reprosign/sign.sock", "allow_uids": [0, 1000], "allow_gids": [27]},
  "poll_interval": 60
}
""")
seed("config-minimal.json", 3, '{"archive": "/a", "requests": "/r", "output": "/o", "keys": {"linux-module": {"key": "/k", "cert": "/c"}}, "requests_keyring": "/k.gpg", "archive_keyring": "/a.gpg"}\n')
seed("config-bad.json", 3, '{"archive": "srv/relative", "requests": "/r", "output": "/o", "keys": {"efi": {"key": "/k", "cert": "/c", "x": 1}, "pe": {}},'
     ' "socket": {"path": "/s", "allow_uids": [-1, 4294967295]}, "poll_interval": 0, "embargoed_suites": [1]}\n')
seed("config-unknown.json", 3, '{"archive": "/a", "requests": "/r", "output": "/o", "keys": {}, "secret": "/etc/shadow"}\n')
PY
# Real ones: apt-ftparchive over the fixtures' shim .debs, as the service
# tests index their repository (Packages gets the version the target asks for).
small_debs=("$fixtures"/debs/shim-*.deb)
if command -v apt-ftparchive >/dev/null && (( ${#small_debs[@]} )); then
    repo=$tmp/repo
    mkdir -p "$repo/pool/main/s/shim" "$repo/dists/bookworm/main/binary-amd64"
    ln -s "${small_debs[@]}" "$repo/pool/main/s/shim/"
    if (cd "$repo" && apt-ftparchive packages pool >dists/bookworm/main/binary-amd64/Packages 2>/dev/null &&
            gzip -9n <dists/bookworm/main/binary-amd64/Packages >dists/bookworm/main/binary-amd64/Packages.gz &&
            apt-ftparchive -o APT::FTPArchive::Release::Suite=bookworm -o APT::FTPArchive::Release::Codename=bookworm \
                -o APT::FTPArchive::Release::Architectures=amd64 -o APT::FTPArchive::Release::Components=main \
                release dists/bookworm >"$tmp/Release"); then
        { printf 1; sed 's/^Date: .*/Date: Sat, 06 Sep 2025 09:30:54 +0000/' "$tmp/Release"; } >"$svc/release-apt-ftparchive.txt"
        { printf 2; sed -E 's/^(Version: )16\.1-2~deb12u1$/\116.1-2/' "$repo/dists/bookworm/main/binary-amd64/Packages"; } \
            >"$svc/packages-apt-ftparchive.txt"
    fi
fi

# ---- fuzz_module: gcc -c objects, signed with the test key and not.
if command -v gcc >/dev/null; then
    cat >"$tmp/tiny.c" <<'C'
/* A module's shape without the kernel headers: code, data, .modinfo. */
static int counter;
int tiny_init(void) { return ++counter; }
void tiny_exit(void) { counter = 0; }
__attribute__((section(".modinfo"), used)) static const char tiny_license[] = "license=GPL";
__attribute__((section(".modinfo"), used)) static const char tiny_name[] = "name=tiny";
C
    gcc -c -O2 -o "$mod/tiny.o" "$tmp/tiny.c"
    gcc -m32 -c -O2 -o "$mod/tiny32.o" "$tmp/tiny.c" 2>/dev/null || rm -f "$mod/tiny32.o"
    # The same objects in big-endian byte order (headers swapped, which is
    # all the module reader looks at): no cross compiler needed.
    for o in "$mod"/tiny*.o; do
        python3 - "$o" "${o%.o}-be.o" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
is64 = d[4] == 2
ehdr, shdr = ("HHIQQQIHHHHHH", "IIQQQQIIQQ") if is64 else ("HHIIIIIHHHHHH", "IIIIIIIIII")
fields = struct.unpack_from("<" + ehdr, d, 16)
struct.pack_into(">" + ehdr, d, 16, *fields)
d[5] = 2
shoff, shentsize, shnum = fields[5], fields[10], fields[11]
for i in range(shnum):
    struct.pack_into(">" + shdr, d, shoff + i * shentsize, *struct.unpack_from("<" + shdr, d, shoff + i * shentsize))
open(sys.argv[2], "wb").write(d)
PY
    done
    # Compressed modules, which the reader must refuse by name.
    command -v xz >/dev/null && xz -c "$mod/tiny.o" >"$mod/tiny.o.xz"
    command -v zstd >/dev/null && zstd -q -c "$mod/tiny.o" >"$mod/tiny.o.zst"
    gzip -9n -c "$mod/tiny.o" >"$mod/tiny.o.gz"
fi
# A few real modules under 15 KiB, spread over the sizes: as Debian signed
# them, stripped, and re-signed with the test key.
modules=()
if [[ -d $fixtures/kernel/ ]]; then
    mapfile -t modules < <(find "$fixtures/kernel/" -name '*.ko' -size -16k -printf '%s %p\n' | sort -n | awk 'NR % 80 == 1 {print $2}')
fi
for m in "${modules[@]}"; do
    cp "$m" "$mod/debian-$(basename "$m")"
done
if $have_cli; then
    for m in "${modules[@]}"; do
        b=$(basename "$m" .ko)
        "$reprosign" strip --output "$mod/stripped-$b.ko" "$m" >/dev/null
        "$reprosign" detach --output "$mod/debian-$b.p7s" "$m" >/dev/null
        "$reprosign" sign --key "$tmp/key.pem" --cert "$tmp/cert.pem" --output "$mod/test-$b.ko" "$mod/stripped-$b.ko" >/dev/null
    done
    for o in "$mod"/tiny*.o; do
        b=$(basename "$o" .o)
        "$reprosign" sign --key "$tmp/key.pem" --cert "$tmp/cert.pem" --output "$mod/$b.signed.ko" "$o" >/dev/null
    done
    if [[ -e $mod/tiny.o ]]; then
        "$reprosign" sign --key "$tmp/key.pem" --cert "$tmp/cert.pem" --hash sha512 --keyid \
            --output "$mod/tiny.sha512-keyid.signed.ko" "$mod/tiny.o" >/dev/null
        # Detached: the target also reads its whole input as module CMS.
        "$reprosign" sign --key "$tmp/key.pem" --cert "$tmp/cert.pem" --detached \
            --output "$mod/tiny.p7s" "$mod/tiny.o" >/dev/null
    fi
fi
for f in "$mod"/*.ko; do
    [[ $f == */stripped-* ]] && continue
    if ! tail -c 28 "$f" | cmp -s - <(printf '~Module signature appended~\n'); then
        echo "make-seeds: $f has no module signature trailer; dropped" >&2
        rm -f "$f"
    fi
done

# ---- fuzz_esl and fuzz_varstore.
# Signature lists by hand (no tools): SHA-256 and X509_SHA256 (revocation)
# lists, and pairs of equal-sized lists, which the target's halving
# turns into a merge of one into the other.
python3 - "$esl" <<'PY'
import hashlib, struct, sys, uuid
out = sys.argv[1]
SHA256 = uuid.UUID("c1c41626-504c-4092-aca9-41f936934328").bytes_le
X509_SHA256 = uuid.UUID("3bd2a492-96c0-4079-b420-fcf98ef103ed").bytes_le
owner = uuid.UUID("77fa9abd-0359-4d32-bd60-28f4e78f784b").bytes_le

def esl(kind, entries, header=b""):
    size = 16 + len(entries[0])
    return kind + struct.pack("<III", 28 + len(header) + size * len(entries), len(header), size) + header + \
        b"".join(owner + e for e in entries)

h = [hashlib.sha256(bytes([i])).digest() for i in range(4)]
revoked = bytes([0xe8, 0x07, 1, 2, 3, 4, 5, 0]) + bytes(8)   # EFI_TIME 2024-01-02 03:04:05
a, b = esl(SHA256, h[0:2]), esl(SHA256, h[1:3])
open(f"{out}/hand-sha256.esl", "wb").write(esl(SHA256, h))
open(f"{out}/hand-x509-sha256.esl", "wb").write(esl(X509_SHA256, [x + revoked for x in h[:2]]))
open(f"{out}/merge-sha256-overlap.esl", "wb").write(a + b)
open(f"{out}/merge-sha256-same.esl", "wb").write(a + a)
PY

# A variable store by hand, and miniatures of real ones: the variables
# kept as they are, ~1 KiB of erased space, store size, FvLength and block
# map set to match, header checksum recomputed. Stores whose variables
# do not fit 16 KiB lose their largest non-authenticated variables (the
# iSCSI "Attempt N" blobs), the last first; with the CLI, a miniature must
# list the same variables (--all) as its original, less the dropped ones.
#   store blank OUT FREE | store shrink SRC OUT FREE [CLI] | store damage SRC OUT junk|interrupted
store() {
    python3 - "$@" <<'PY'
import json, struct, subprocess, sys, uuid
NV_FV = uuid.UUID("fff12b8d-7696-4c8b-a985-2747075b4f50").bytes_le
AUTH_STORE = uuid.UUID("aaf32c78-947b-439a-a180-2e144ec37792").bytes_le
mode, args = sys.argv[1], sys.argv[2:]

def finish(img, hlen, path):
    struct.pack_into("<Q", img, 32, len(img))
    if hlen == 72:
        struct.pack_into("<IIII", img, 56, 1, len(img), 0, 0)
    struct.pack_into("<I", img, hlen + 16, len(img) - hlen)
    struct.pack_into("<H", img, 50, 0)
    struct.pack_into("<H", img, 50, -sum(struct.unpack_from(f"<{hlen // 2}H", img)) & 0xffff)
    open(path, "wb").write(img)

def walk(d):
    hlen = struct.unpack_from("<H", d, 48)[0]
    end = hlen + struct.unpack_from("<I", d, hlen + 16)[0]
    pos = first = (hlen + 28 + 3) & ~3
    out = []
    while pos + 60 <= end and d[pos:pos + 2] == b"\xaa\x55":
        ns, ds = struct.unpack_from("<II", d, pos + 36)
        name = d[pos + 60:pos + 60 + ns].decode("utf-16-le", "replace").split("\0")[0]
        nxt = min((pos + 60 + ns + ds + 3) & ~3, end)
        out.append({"off": pos, "end": nxt, "name": name, "guid": str(uuid.UUID(bytes_le=bytes(d[pos + 44:pos + 60]))),
                    "attrs": struct.unpack_from("<I", d, pos + 4)[0]})
        pos = nxt
    return hlen, first, end, pos, out

if mode == "blank":
    free = int(args[1])
    img = bytearray(16) + NV_FV + bytearray(8) + b"_FVH" + struct.pack("<IHHHBB", 0x0004feff, 72, 0, 0, 0, 2)
    img += bytearray(16) + AUTH_STORE + struct.pack("<IBBHI", 0, 0x5a, 0xfe, 0, 0) + b"\xff" * free
    finish(img, 72, args[0])
elif mode == "shrink":
    src, dst, free = args[0], args[1], int(args[2])
    d = open(src, "rb").read()
    hlen, first, end, chain_end, vs = walk(d)
    used = len(d[:end].rstrip(b"\xff"))
    tail = d[chain_end:max(chain_end, (used + 3) & ~3)]
    dropped = []
    while first + sum(v["end"] - v["off"] for v in vs) + len(tail) + free > 16384:
        cand = [v for v in reversed(vs) if not v["attrs"] & 0x20]
        if not cand:
            sys.exit(f"{src}: variables do not fit 16 KiB")
        v = max(cand, key=lambda v: v["end"] - v["off"])
        vs.remove(v)
        dropped.append((v["name"], v["guid"]))
    img = bytearray(d[:first]) + b"".join(d[v["off"]:v["end"]] for v in vs) + tail + b"\xff" * free
    finish(img, hlen, dst)
    if len(args) > 3:
        def listing(f):
            r = subprocess.run([args[3], "efi", "list", "--all", "--json", "--vars", f], capture_output=True, text=True)
            return json.loads(r.stdout)["variables"] if r.returncode == 0 else None
        want = [v for v in listing(src) if (v["name"], v["guid"]) not in dropped]
        if listing(dst) != want:
            sys.exit(f"{dst}: does not list the variables of {src}")
    if dropped:
        print(f"make-seeds: {dst}: left out {', '.join(n for n, g in dropped)} to fit 16 KiB", file=sys.stderr)
elif mode == "damage":
    d = bytearray(open(args[0], "rb").read())
    hlen, first, end, chain_end, vs = walk(d)
    if args[2] == "junk":
        # A torn write: zeros where the erased space starts.
        d[chain_end:chain_end + 16] = bytes(16)
    else:
        # Caught mid-update: the new db only has its header, the old one
        # is in deleted transition (and so still the live copy).
        db = [v for v in vs if v["name"] == "db"]
        d[db[-1]["off"] + 2] = 0x7f
        d[db[-2]["off"] + 2] = 0x3e
    open(args[1], "wb").write(d)
PY
}
store blank "$vars/blank.fd" 1024
stores=("$ovmf"/OVMF_VARS*.fd)
if ! $have_cli; then
    echo "make-seeds: no $reprosign: no signed modules, signed updates or enrolled stores" >&2
elif (( ! ${#stores[@]} )); then
    echo "make-seeds: no $ovmf/OVMF_VARS*.fd (package ovmf): no seeds from OVMF's stores" >&2
fi
if $have_cli; then
    check_store() {
        if ! "$reprosign" efi list --vars "$1" >/dev/null; then
            echo "make-seeds: $1 does not parse; dropped" >&2
            rm -f "$1"
        fi
    }
    check_store "$vars/blank.fd"
    for s in "${stores[@]}"; do
        b=$(basename "$s" .fd)
        store shrink "$s" "$vars/mini-$b.fd" 1024 "$reprosign" || rm -f "$vars/mini-$b.fd"
        # The lists firmware keeps, out of every store that has them.
        for n in PK KEK db dbx; do
            "$reprosign" efi db --vars "$s" --name $n --output "$esl/$b-$n.esl" >/dev/null 2>&1 || rm -f "$esl/$b-$n.esl"
        done
    done
    dedupe "$esl"
    # Lists 'efi siglist' makes: the test certificate (under two owners, and
    # the pair of them to merge), with the certificates of OVMF's db.
    python3 - "$tmp" "$esl"/*-db.esl <<'PY'
import struct, sys
n = 0
for path in sys.argv[2:]:
    d, pos = open(path, "rb").read(), 0
    while pos + 28 <= len(d):
        lsize, hsize, ssize = struct.unpack_from("<III", d, pos + 16)
        e = pos + 28 + hsize
        while ssize > 16 and e + ssize <= pos + lsize and d[pos:pos + 16].hex() == "a159c0a5e494a74a87b5ab155c2bf072":
            open(f"{sys.argv[1]}/db-cert-{n}.der", "wb").write(d[e + 16:e + ssize])
            n += 1
            e += ssize
        pos += max(lsize, 28)
PY
    db_certs=("$tmp"/db-cert-*.der)
    "$reprosign" efi siglist --cert "$tmp/cert.pem" --output "$esl/test.esl" >/dev/null
    "$reprosign" efi siglist --cert "$tmp/cert.pem" --owner 77fa9abd-0359-4d32-bd60-28f4e78f784b \
        --output "$tmp/test-ms.esl" >/dev/null
    cat "$esl/test.esl" "$tmp/test-ms.esl" >"$esl/merge-test-owners.esl"
    cat "$esl/test.esl" "$esl/test.esl" >"$esl/merge-test-same.esl"
    if (( ${#db_certs[@]} )); then
        "$reprosign" efi siglist --cert "${db_certs[0]}" --cert "$tmp/cert.pem" --owner a0baa8a3-041d-48a8-bc87-c36d121b5e3d \
            --output "$esl/certs.esl" >/dev/null
    fi
    if (( ${#unsigned[@]} )); then
        hashes=()
        for f in "${unsigned[@]}"; do
            hashes+=(--hash "$f")
        done
        "$reprosign" efi siglist "${hashes[@]}" --output "$esl/shim-hashes.esl" >/dev/null
    fi
    # Signed updates (EFI_VARIABLE_AUTHENTICATION_2 + list), replacing and
    # appending, of each variable; and PK's deletion (an empty list).
    : >"$tmp/empty.esl"
    sign_var() {  # sign_var NAME ESL OUT [--append]
        "$reprosign" efi sign-var --name "$1" --key "$tmp/key.pem" --cert "$tmp/cert.pem" --timestamp 1700000000 \
            "${@:4}" "$2" --output "$3" >/dev/null
    }
    sign_var db "$esl/test.esl" "$esl/db-test.auth"
    sign_var db "$esl/hand-sha256.esl" "$esl/db-hashes-append.auth" --append
    sign_var PK "$tmp/empty.esl" "$esl/PK-delete.auth"
    for f in "$esl"/OVMF_VARS*-{PK,KEK,db,dbx}.esl; do
        n=${f%.esl}; n=${n##*-}
        b=$(basename "$f" .esl)
        sign_var "$n" "$f" "$esl/$b.auth"
        [[ $n == db* ]] && sign_var "$n" "$f" "$esl/$b-append.auth" --append
    done

    # Stores 'efi enroll' and 'efi apply' write, from a blank store with room
    # to grow, then shrunk: the test certificate as PK, KEK and db (with
    # OVMF's db certificate and dbx when it has them), an appended db, a
    # replaced dbx (the old copies marked deleted).
    store blank "$tmp/template.fd" 12288
    enroll=(--pk "$tmp/cert.pem" --kek "$tmp/cert.pem" --db "$tmp/cert.pem")
    (( ${#db_certs[@]} )) && enroll+=(--db "${db_certs[-1]}")
    dbx=("$esl"/OVMF_VARS*-dbx.esl)
    (( ${#dbx[@]} )) && enroll+=(--dbx "${dbx[0]}")
    if "$reprosign" efi enroll --vars "$tmp/template.fd" "${enroll[@]}" --timestamp 1700000000 \
            --output "$tmp/enrolled.fd" >/dev/null; then
        store shrink "$tmp/enrolled.fd" "$vars/enrolled.fd" 1024 "$reprosign" || rm -f "$vars/enrolled.fd"
        store shrink "$tmp/enrolled.fd" "$vars/enrolled-full.fd" 0 "$reprosign" || rm -f "$vars/enrolled-full.fd"
        [[ -e $vars/enrolled.fd ]] && store damage "$vars/enrolled.fd" "$vars/enrolled-torn.fd" junk
    fi
    if [[ -e $tmp/enrolled.fd ]] &&
        "$reprosign" efi apply --vars "$tmp/enrolled.fd" --name db "$esl/db-hashes-append.auth" \
            --output "$tmp/applied-db.fd" >/dev/null &&
        "$reprosign" efi sign-var --name dbx --key "$tmp/key.pem" --cert "$tmp/cert.pem" --timestamp 1700000100 \
            "$esl/hand-x509-sha256.esl" --output "$tmp/dbx.auth" >/dev/null &&
        "$reprosign" efi apply --vars "$tmp/applied-db.fd" --name dbx "$tmp/dbx.auth" --output "$tmp/applied.fd" >/dev/null; then
        store shrink "$tmp/applied.fd" "$vars/applied.fd" 1024 "$reprosign" || rm -f "$vars/applied.fd"
        [[ -e $vars/applied.fd ]] && store damage "$vars/applied.fd" "$vars/applied-interrupted.fd" interrupted
    fi
    for f in "$vars"/*.fd; do
        check_store "$f"
    done
    dedupe "$vars"
fi

# Seeds past -max_len would be cut; none of the above should be.
for f in "$esl"/* "$vars"/* "$mod"/* "$svc"/*; do
    if (( $(stat -c %s "$f") > 16384 )); then
        echo "make-seeds: $f is larger than 16384 bytes; dropped" >&2
        rm -f "$f"
    fi
done
if [[ -x $reprosign ]]; then
    # The transparency log: a small log signed with the fuzz keys.
    keys=$(dirname "$0")/fuzz_tlog_keys.h
    tl=$out/tlog-work
    mkdir -p "$tl" "$out/fuzz_note" "$out/fuzz_tlog_proof"
    sed -n 's/^#define FUZZ_LOG_SKEY "\(.*\)"$/\1/p' "$keys" >"$tl/log.key"
    sed -n 's/^#define FUZZ_WITNESS_SKEY "\(.*\)"$/\1/p' "$keys" >"$tl/w.key"
    sed -n 's/^#define FUZZ_LOG_VKEY "\(.*\)"$/\1/p' "$keys" >"$tl/log.vkey"
    for n in 1 3 300; do
        python3 -c "for i in range($n): print('{\"i\":%d,\"path\":\"usr/lib/shim/fbx64.efi\"}' % i)" >"$tl/e$n"
        "$reprosign" log append "$tl/L$n" --key "$tl/log.key" --batch 100 <"$tl/e$n" >/dev/null
        cp "$tl/L$n/checkpoint" "$out/fuzz_note/checkpoint-$n"
        for k in 0 $(( n / 2 )); do
            { sed -n "$((k + 1))p" "$tl/e$n" | tr -d '\n'; printf '\0'; "$reprosign" log prove "$tl/L$n" "$k"; } \
                >"$out/fuzz_tlog_proof/proof-$n-$k"
        done
    done
    "$reprosign" log cosign "$tl/L300" "$out/fuzz_note/checkpoint-300" --vkey "$tl/log.vkey" --key "$tl/w.key" \
        >"$out/fuzz_note/cosigned" 2>/dev/null
    cp "$tl/log.key" "$out/fuzz_note/key"; cp "$tl/log.vkey" "$out/fuzz_note/vkey"
    rm -rf "$tl"
fi
# Kernel images whose payload holds a built-in certificate list (chain
# reads the build key out of the last stage).
kimg=$out/fuzz_kernel_image
mkdir -p "$kimg"
if command -v openssl >/dev/null; then
    openssl req -new -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "/CN=fuzz build key" \
        -addext "subjectKeyIdentifier=hash" -keyout "$tmp/kimg.key" -outform DER -out "$tmp/kimg.der" 2>/dev/null
    mkbz="python3 $here/../tools/mkbzimage.py"
    for z in xz zstd gzip none; do
        command -v zstd >/dev/null || [ "$z" != zstd ] || continue
        $mkbz payload "$tmp/kimg.$z" --cert "$tmp/kimg.der" --compress "$z" --filler 600 || continue
        if [ "$z" = none ]; then
            cp "$tmp/kimg.$z" "$kimg/decompressed"
            # An arm64 Image: the kernel uncompressed, .align 8 being 256 bytes.
            $mkbz payload "$tmp/kimg.a64" --cert "$tmp/kimg.der" --compress none --filler 600 --align 256 &&
                python3 "$here/../tools/mkpe.py" "$tmp/kimg.efi" --sections 1 --add-section .payload="$tmp/kimg.a64" &&
                $mkbz header "$tmp/kimg.efi" "$tmp/kimg.a64" --arm64 && cp "$tmp/kimg.efi" "$kimg/image-arm64"
            continue
        fi
        python3 "$here/../tools/mkpe.py" "$tmp/kimg.efi" --sections 1 \
            --add-section .payload="$tmp/kimg.$z" &&
            $mkbz header "$tmp/kimg.efi" "$tmp/kimg.$z" && cp "$tmp/kimg.efi" "$kimg/bzimage-$z"
        # The same payload in an EFI zboot image, as loong64's kernels come.
        python3 "$here/../tools/mkpe.py" "$tmp/kimg.efi" --sections 1 --add-section .payload="$tmp/kimg.$z" &&
            $mkbz header "$tmp/kimg.efi" "$tmp/kimg.$z" --zboot "$z" && cp "$tmp/kimg.efi" "$kimg/zboot-$z"
    done
    # A RISC-V Image: uncompressed, as an arm64 one.
    $mkbz payload "$tmp/kimg.rv" --cert "$tmp/kimg.der" --compress none --filler 600 --align 256 &&
        python3 "$here/../tools/mkpe.py" "$tmp/kimg.efi" --sections 1 --add-section .payload="$tmp/kimg.rv" &&
        $mkbz header "$tmp/kimg.efi" "$tmp/kimg.rv" --riscv64 && cp "$tmp/kimg.efi" "$kimg/image-riscv64"
fi
# Debian's kernels: 2 KiB either side of the list, found by the build key's CN.
for k in "$fixtures"/signed-kernel/boot/vmlinuz-* "$fixtures"/trixie/signed-kernel/boot/vmlinuz-* \
    "$fixtures"/trixie/signed-kernel-arm64/boot/vmlinuz-* "$fixtures"/bookworm-i386/signed-kernel/boot/vmlinuz-* \
    "$fixtures"/forky/kernel-*/binary/usr/lib/modules/*/vmlinuz; do
    [ -f "$k" ] || continue
    python3 - "$k" "$kimg/window-$(basename "$(dirname "$k")")-$(basename "$k")" <<'PY' || true
import lzma, struct, subprocess, sys
img = open(sys.argv[1], "rb").read()
start = ((img[0x1F1] or 4) + 1) * 512 + struct.unpack_from("<I", img, 0x248)[0]
pay = img[start:start + struct.unpack_from("<I", img, 0x24C)[0]]
if img[4:8] == b"zimg":                # EFI zboot: its header gives the payload
    off, size = struct.unpack_from("<II", img, 8)
    pay = img[off:off + size + 4]
if img[0x38:0x3C] in (b"ARM\x64", b"RSC\x05"):     # an Image: the kernel as it is
    data = img
elif pay.startswith(b"\x28\xb5\x2f\xfd"):
    data = subprocess.run(["zstd", "-dc"], input=pay[:-4], capture_output=True).stdout
else:
    data = lzma.LZMADecompressor().decompress(pay)
at = data.find(b"Build time autogenerated kernel key")
if at > 0:
    open(sys.argv[2], "wb").write(data[max(0, at - 2048):at + 2048])
PY
done

# The rest needs the CLI and the shim fixtures.
if [[ ! -x $reprosign ]] || (( ! ${#unsigned[@]} || ! ${#signed[@]} )); then
    echo "make-seeds: no $reprosign or no fixtures under $fixtures (tests/fetch-fixtures.sh): no PE seeds" >&2
    echo "make-seeds: $(summary)in $out"
    exit 0
fi

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
for f in "$pe"/mini-*.efi; do
    b=$(basename "$f" .efi)
    SOURCE_DATE_EPOCH=1700000000 "$reprosign" sign --prepare-offline --cert "$tmp/cert.pem" \
        --output "$req/$b.json" "$f" >/dev/null
    "$reprosign" sign --prepare-offline --cert "$tmp/cert.pem" --hash sha512 --no-signing-time \
        --output "$req/$b.sha512.json" "$f" >/dev/null
done
# The same in the socket's form: the certificate named by its SHA-256.
python3 - "$req" <<'PY'
import base64, glob, hashlib, json, sys
for path in sorted(glob.glob(f"{sys.argv[1]}/*.json")):
    r = json.load(open(path))
    r["certificate_sha256"] = hashlib.sha256(base64.b64decode(r.pop("certificate"))).hexdigest()
    r.pop("chain", None)
    open(path[:-5] + ".wire.json", "w").write(json.dumps(r, separators=(",", ":")))
PY
# The socket's frames (after fuzz_frames' flags byte): one request, two
# back to back, a cut one; the service's answers, a signature value and a
# refusal; a module request with the module attached, sealed and not.
mkdir -p "$out/fuzz_frames"
small_module=$(ls -S "$mod"/*.o 2>/dev/null | tail -n 1)
if [ -n "$small_module" ]; then
    "$reprosign" sign --prepare-offline --cert "$tmp/module-cert.pem" --output "$tmp/module.req" "$small_module" >/dev/null
fi
python3 - "$req" "$out/fuzz_frames" "${small_module:-}" "$tmp/module.req" <<'PY'
import base64, glob, hashlib, json, os, struct, sys
reqs = [open(p, "rb").read() for p in sorted(glob.glob(f"{sys.argv[1]}/*.wire.json"))][:2]
frame = lambda m: struct.pack(">I", len(m)) + m
seed = lambda name, data: open(f"{sys.argv[2]}/{name}", "wb").write(data)
if reqs:
    seed("one", b"\0" + frame(reqs[0]))
    seed("two", b"\0" + b"".join(frame(m) for m in reqs))
    seed("cut", b"\0" + frame(reqs[0])[:-7])
seed("empty-length", b"\0" + bytes(4))
value = base64.b64encode(bytes(range(256))).decode()
seed("answers", b"\0" +
    frame(json.dumps({"ok": True, "signature": value, "log_index": 41}, separators=(",", ":")).encode())
    + frame(b'{"ok":false,"error":"uid 1000 (gid 1000) is not allowed to use this signing socket"}'))
if sys.argv[3] and os.path.exists(sys.argv[4]):
    module = open(sys.argv[3], "rb").read()[:65535]
    r = json.load(open(sys.argv[4]))
    r["certificate_sha256"] = hashlib.sha256(base64.b64decode(r.pop("certificate"))).hexdigest()
    r.pop("chain", None)
    r["image"] = "attached"
    body = frame(json.dumps(r, separators=(",", ":")).encode())
    head = lambda flags: bytes([flags]) + struct.pack(">H", len(module)) + module
    seed("module-attached", head(1) + body)
    seed("module-unsealed", head(3) + body)
    r.pop("image")
    seed("module-bare", b"\0" + frame(json.dumps(r, separators=(",", ":")).encode()))
PY


# efivarfs files: the name, a NUL, the attributes word and the data, as
# Linux shows OVMF's Microsoft store; small flags; a cut-short one.
efv=$out/fuzz_efivarfs
mkdir -p "$efv"
efivar_seed() {  # efivar_seed SEED NAME-GUID ATTR-BYTE DATA-FILE
    { printf '%s\0' "$2"; printf "\\x$3\\x00\\x00\\x00"; cat "$4"; } >"$efv/$1"
}
printf '\001' >"$tmp/one"
efivar_seed secureboot SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c 06 "$tmp/one"
efivar_seed mokdbstate MokIgnoreDB-605dab50-e046-4300-abb6-3dd810dd8b23 06 "$tmp/one"
head -c 3 "$tmp/one" | { printf 'db-d719b2cb-3d3a-4596-a3bc-dad00e67656f\0\x27'; cat; } >"$efv/short"
if $have_cli && [[ -r $ovmf/OVMF_VARS_4M.ms.fd ]]; then
    for v in PK:8be4df61-93ca-11d2-aa0d-00e098032b8c KEK:8be4df61-93ca-11d2-aa0d-00e098032b8c \
        db:d719b2cb-3d3a-4596-a3bc-dad00e67656f dbx:d719b2cb-3d3a-4596-a3bc-dad00e67656f; do
        "$reprosign" efi db --vars "$ovmf/OVMF_VARS_4M.ms.fd" --name "${v%%:*}" --output "$tmp/${v%%:*}.esl"
        efivar_seed "ms-${v%%:*}" "${v%%:*}-${v#*:}" 27 "$tmp/${v%%:*}.esl"
    done
    efivar_seed mok MokListRT-605dab50-e046-4300-abb6-3dd810dd8b23 06 "$tmp/db.esl"
fi

# gpgv's status lines (good, expired key, bad) and a Release's header.
mkdir -p "$out/fuzz_archive_meta"
printf '[GNUPG:] NEWSIG\n[GNUPG:] GOODSIG 0123456789ABCDEF archive <a@example.org>\n[GNUPG:] VALIDSIG 0123456789ABCDEF0123456789ABCDEF01234567 2026-12-04 1796380000 0 4 0 22 10 00 0123456789ABCDEF0123456789ABCDEF01234567\n' \
    >"$out/fuzz_archive_meta/good"
printf '[GNUPG:] EXPKEYSIG 0123456789ABCDEF archive\n[GNUPG:] VALIDSIG 0123 2026-12-04 1796380000 0\n' >"$out/fuzz_archive_meta/expkeysig"
printf '[GNUPG:] BADSIG 0123456789ABCDEF archive\n' >"$out/fuzz_archive_meta/badsig"
printf 'Origin: Debian\nSuite: bookworm-security\nCodename: bookworm-security\nDate: Fri, 04 Dec 2026 13:00:00 UTC\nValid-Until: Fri, 11 Dec 2026 13:00:00 UTC\nSHA256:\n 0123 12 main/binary-amd64/Packages\n' \
    >"$out/fuzz_archive_meta/release"

# The module seeds compressed each way Linux compresses modules (chain
# --modules reads name.ko.xz, .ko.zst and .ko.gz decompressed).
mkdir -p "$out/fuzz_decompress"
for m in "$mod"/*; do
    case $m in *.xz | *.zst | *.gz) continue ;; esac
    b=$out/fuzz_decompress/$(basename "$m")
    command -v xz >/dev/null && xz -c "$m" >"$b.xz"
    command -v zstd >/dev/null && zstd -q -c "$m" >"$b.zst"
    gzip -9n -c "$m" >"$b.gz"
done

echo "make-seeds: $(summary)in $out (largest PE seed $(wc -c "$pe"/* | sort -n | tail -2 | head -1 | awk '{print $1}') bytes)"

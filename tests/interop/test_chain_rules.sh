#!/bin/bash
# chain against the rules of shim 16.1, Debian's GRUB 2.06 and Linux 6.1,
# one case per point where a real boot and a plain db/dbx reading differ.
# Each case names the rule the output must cite.
. "$TESTS_DIR/lib.sh"
need_tool python3; need_tool xz; need_tool zstd; need_tool gzip
mkpe() { python3 "$TESTS_DIR/tools/mkpe.py" "$@"; }
sign() { "$REPROSIGN" sign --key "$WORK/$1.key" --cert "$WORK/$1.crt" "$2" --output "$3"; }
siglist() { "$REPROSIGN" efi siglist "$@"; }
make_key db; make_key vendor; make_key other; make_key mok; make_key dbxed
openssl req -new -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -subj "/CN=reprosign test modsign" \
    -addext "extendedKeyUsage=codeSigning,1.3.6.1.4.1.2312.16.1.2" \
    -keyout "$WORK/modsign.key" -out "$WORK/modsign.crt" 2>/dev/null

# accepted_with / refused_with WHAT PATTERN COMMAND...: the verdict, and
# the rule or entry the output must name.
verdict() {
    local want=$1 what=$2 pattern=$3 rc=0; shift 3
    "$@" >"$WORK/.out" 2>&1 || rc=$?
    if [ "$want" = accept ] && [ "$rc" -ne 0 ]; then fail "$what: refused"; sed 's/^/    /' "$WORK/.out"; return; fi
    if [ "$want" = refuse ] && [ "$rc" -ne 1 ]; then fail "$what: exit $rc"; sed 's/^/    /' "$WORK/.out"; return; fi
    if grep -q -- "$pattern" "$WORK/.out"; then pass "$what"; else
        fail "$what: output lacks '$pattern'"; sed 's/^/    /' "$WORK/.out"; fi
}
accepted_with() { verdict accept "$@"; }
refused_with() { verdict refuse "$@"; }

# shim's cert_table with a DER vendor cert and an optional vendor dbx.
python3 - "$WORK/vendor.crt" "$WORK/vc.bin" <<'PY'
import ssl, struct, sys
cert = ssl.PEM_cert_to_DER_cert(open(sys.argv[1]).read())
open(sys.argv[2], "wb").write(struct.pack("<IIII", len(cert), 0, 16, 16 + len(cert)) + cert)
PY
row_sbat='sbat,1,SBAT Version,sbat,1,https://github.com/rhboot/shim/blob/main/SBAT.md'
printf '%s\nshim,4,UEFI shim,shim,16.1,https://github.com/rhboot/shim\n' "$row_sbat" >"$WORK/shim.csv"
printf '%s\ngrub,4,Free Software Foundation,grub,2.06,https://www.gnu.org/software/grub/\n' "$row_sbat" >"$WORK/grub4.csv"
printf '%s\ngrub,4\n' "$row_sbat" >"$WORK/grub-2col.csv"
printf 'sbat,0,SBAT Version,sbat,0,x\nfoo,1,x,foo,1,x\n' >"$WORK/sbat0.csv"
# An old shim (no .sbatlevel) and a 16.1-like one.
mkpe "$WORK/shim-old.efi" --add-section .vendor_cert="$WORK/vc.bin"
python3 - "$WORK/level.bin" <<'PY'
import struct, sys
prev, latest = b"sbat,1,2025021800\nshim,4\ngrub,4\n\0", b"sbat,1,2025021800\nshim,4\ngrub,5\n\0"
open(sys.argv[1], "wb").write(struct.pack("<III", 0, 8, 8 + len(prev)) + prev + latest)
PY
mkpe "$WORK/shim.efi" --add-section .vendor_cert="$WORK/vc.bin" --add-section .sbat="$WORK/shim.csv" \
    --add-section .sbatlevel="$WORK/level.bin"
sign db "$WORK/shim.efi" "$WORK/shim.signed"
sign db "$WORK/shim-old.efi" "$WORK/shim-old.signed"
siglist --cert "$WORK/db.crt" --output "$WORK/db.esl"

mkpe "$WORK/grub.efi" --sections 2 --add-section .sbat="$WORK/grub4.csv"
mkpe "$WORK/kernel.efi" --sections 3
sign vendor "$WORK/grub.efi" "$WORK/grub.signed"
sign vendor "$WORK/kernel.efi" "$WORK/kernel.signed"
DB=(--db "$WORK/db.esl")

# 1. A kernel without .sbat passes through shim_lock (pe.c
#    verify_sbat_section, in_protocol); an image shim loads itself does not.
accepted_with "shim_lock: a kernel without .sbat passes" "no .sbat section, accepted through the shim_lock" \
    "$REPROSIGN" chain "${DB[@]}" "$WORK/shim.signed" "$WORK/grub.signed" "$WORK/kernel.signed"
refused_with "shim loading an image without .sbat refuses it" "which shim requires of images it loads" \
    "$REPROSIGN" chain "${DB[@]}" "$WORK/shim.signed" "$WORK/kernel.signed"

# 2. One good signature is enough for shim; firmware (EDK2) still refuses
#    an image with any signature in dbx.
sign dbxed "$WORK/grub.signed" "$WORK/grub.2sig"
siglist --cert "$WORK/dbxed.crt" --output "$WORK/dbxed.esl"
accepted_with "shim: a second signature in dbx does not undo the good one" "signature 1 chains to CN=reprosign test vendor" \
    "$REPROSIGN" chain "${DB[@]}" --dbx "$WORK/dbxed.esl" "$WORK/shim.signed" "$WORK/grub.2sig" "$WORK/kernel.signed"
sign db "$WORK/shim.signed" "$WORK/shim.2sig"
sign dbxed "$WORK/shim.2sig" "$WORK/shim.3sig"
refused_with "firmware: any signature in dbx refuses (EDK2)" "rejected by dbx" \
    "$REPROSIGN" chain "${DB[@]}" --dbx "$WORK/dbxed.esl" "$WORK/shim.3sig"

# 3. A hash in MokList accepts before any certificate is looked at, even
#    when the only signer is revoked.
sign dbxed "$WORK/grub.efi" "$WORK/grub.byrevoked"
siglist --hash "$WORK/grub.byrevoked" --output "$WORK/grub-hash.esl"
accepted_with "shim: a MokList hash accepts before the revoked signer is seen" "hash .* is in MokListRT" \
    "$REPROSIGN" chain "${DB[@]}" --dbx "$WORK/dbxed.esl" --mok "$WORK/grub-hash.esl" \
    "$WORK/shim.signed" "$WORK/grub.byrevoked"

# 4. shim never reads dbx X509_SHA256 (TBS hash) entries.
python3 "$TESTS_DIR/tools/esl-entry.py" tbs "$WORK/vendor.crt" "$WORK/tbs.esl"
accepted_with "shim: the signer's TBS hash in dbx is not read" "chains to CN=reprosign test vendor" \
    "$REPROSIGN" chain "${DB[@]}" --dbx "$WORK/tbs.esl" "$WORK/shim.signed" "$WORK/grub.signed"
siglist --cert "$WORK/vendor.crt" --output "$WORK/vendor-db.esl"
refused_with "firmware: the same TBS hash in dbx revokes (EDK2)" "rejected by dbx" \
    "$REPROSIGN" chain --db "$WORK/vendor-db.esl" --dbx "$WORK/tbs.esl" "$WORK/grub.signed"

# 5. SHA-1 Authenticode hashes in dbx refuse under shim.
siglist --sha1 --hash "$WORK/grub.signed" --output "$WORK/grub-sha1.esl"
refused_with "shim: the SHA-1 hash in dbx refuses" "SHA-1 Authenticode hash .* is in dbx" \
    "$REPROSIGN" chain "${DB[@]}" --dbx "$WORK/grub-sha1.esl" "$WORK/shim.signed" "$WORK/grub.signed"
refused_with "shim: GRUB's hash in MokListX refuses" "SHA-256 Authenticode hash .* is in MokListX" \
    "$REPROSIGN" chain "${DB[@]}" --mokx "$WORK/grub-hash.esl" "$WORK/shim.signed" "$WORK/grub.byrevoked"

# 6. An SBAT level always applies: built in for shims without .sbatlevel,
#    a newer SbatLevel variable, or "latest" under SbatPolicy.
mkpe "$WORK/sbat0.efi" --sections 1 --add-section .sbat="$WORK/sbat0.csv"
sign vendor "$WORK/sbat0.efi" "$WORK/sbat0.signed"
refused_with "SBAT: a shim without .sbatlevel applies its built-in level" "component sbat generation 0 is revoked" \
    "$REPROSIGN" chain "${DB[@]}" "$WORK/shim-old.signed" "$WORK/sbat0.signed"
accepted_with "SBAT: shim's previous level by default" "SBAT generations pass" \
    "$REPROSIGN" chain "${DB[@]}" "$WORK/shim.signed" "$WORK/grub.signed"
printf 'sbat,1,2026010100\nshim,4\ngrub,5\n' >"$WORK/newer.level"
printf 'sbat,1,2024010100\nshim,2\ngrub,3\n' >"$WORK/older.level"
refused_with "SBAT: a newer SbatLevel variable wins" "grub generation 4 is revoked" \
    "$REPROSIGN" chain "${DB[@]}" --sbat-level "$WORK/newer.level" "$WORK/shim.signed" "$WORK/grub.signed"
accepted_with "SBAT: an older SbatLevel variable is replaced by shim's" "replaces the older SbatLevel" \
    "$REPROSIGN" chain "${DB[@]}" --sbat-level "$WORK/older.level" "$WORK/shim.signed" "$WORK/grub.signed"
refused_with "SBAT: SbatPolicy latest takes .sbatlevel's latest" "grub generation 4 is revoked" \
    "$REPROSIGN" chain "${DB[@]}" --sbat-policy latest "$WORK/shim.signed" "$WORK/grub.signed"

# 7. SBAT parsing: rows need 6 columns; two .sbat sections are refused.
mkpe "$WORK/grub-2col.efi" --sections 1 --add-section .sbat="$WORK/grub-2col.csv"
mkpe "$WORK/grub-2sbat.efi" --sections 1 --add-section .sbat="$WORK/grub4.csv" --add-section .sbat="$WORK/grub4.csv"
sign vendor "$WORK/grub-2col.efi" "$WORK/grub-2col.signed"
sign vendor "$WORK/grub-2sbat.efi" "$WORK/grub-2sbat.signed"
refused_with "SBAT: a row with 2 columns" "too few columns" \
    "$REPROSIGN" chain "${DB[@]}" "$WORK/shim.signed" "$WORK/grub-2col.signed"
refused_with "SBAT: two .sbat sections" "two .sbat sections" \
    "$REPROSIGN" chain "${DB[@]}" "$WORK/shim.signed" "$WORK/grub-2sbat.signed"

# A .sbat section with relocations is refused; one whose SizeOfRawData is
# below its VirtualSize is ignored (verify.c verify_buffer_sbat).
patch_sbat() {  # patch_sbat IN OUT relocs|short
    python3 - "$@" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
pe = struct.unpack_from("<I", d, 0x3c)[0]
n, opt = struct.unpack_from("<H", d, pe + 6)[0], struct.unpack_from("<H", d, pe + 20)[0]
for i in range(n):
    h = pe + 24 + opt + 40 * i
    if d[h:h + 8] == b".sbat\0\0\0":
        if sys.argv[3] == "relocs":
            struct.pack_into("<I", d, h + 24, 0x400)
        else:
            struct.pack_into("<I", d, h + 8, struct.unpack_from("<I", d, h + 16)[0] + 1)
open(sys.argv[2], "wb").write(d)
PY
}
patch_sbat "$WORK/grub.efi" "$WORK/grub-relocs.efi" relocs
patch_sbat "$WORK/grub.efi" "$WORK/grub-short.efi" short
sign vendor "$WORK/grub-relocs.efi" "$WORK/grub-relocs.signed"
sign vendor "$WORK/grub-short.efi" "$WORK/grub-short.signed"
refused_with "SBAT: a .sbat section with relocations" "the .sbat section has relocations" \
    "$REPROSIGN" chain "${DB[@]}" "$WORK/shim.signed" "$WORK/grub-relocs.signed"
refused_with "SBAT: a .sbat section shorter on disk than in memory is ignored (so missing)" "no .sbat section" \
    "$REPROSIGN" chain "${DB[@]}" "$WORK/shim.signed" "$WORK/grub-short.signed"

# 8. MOK, and module-signing certificates, which shim skips.
sign mok "$WORK/grub.efi" "$WORK/grub.mok"
siglist --cert "$WORK/mok.crt" --output "$WORK/mok.esl"
siglist --cert "$WORK/modsign.crt" --output "$WORK/modsign.esl"
sign modsign "$WORK/grub.efi" "$WORK/grub.modsign"
accepted_with "shim: a MokList certificate accepts" "chains to CN=reprosign test mok (MokListRT)" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "$WORK/shim.signed" "$WORK/grub.mok"
refused_with "shim: a MokList certificate with the module-signing EKU is skipped" "chains to no certificate" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/modsign.esl" "$WORK/shim.signed" "$WORK/grub.modsign"
refused_with "shim: a MokList certificate in MokListX refuses" "which is in MokListX" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" --mokx "$WORK/mok.esl" "$WORK/shim.signed" "$WORK/grub.mok"

# 9. GRUB started from db without shim refuses kernels.
sign db "$WORK/grub.efi" "$WORK/grub.db"
refused_with "GRUB from db without shim refuses the kernel" "GRUB needs shim_lock" \
    "$REPROSIGN" chain "${DB[@]}" "$WORK/grub.db" "$WORK/kernel.signed"

# 8b. A shim built with VENDOR_DB_FILE: its .vendor_cert holds vendor_db
#     and vendor_dbx signature lists instead of one certificate.
"$REPROSIGN" efi siglist --cert "$WORK/other.crt" --hash "$WORK/kernel.efi" --output "$WORK/vendor_db.esl"
"$REPROSIGN" efi siglist --hash "$WORK/grub-2col.signed" --output "$WORK/vendor_dbx.esl"
python3 - "$WORK/vendor_db.esl" "$WORK/vendor_dbx.esl" "$WORK/vc-lists.bin" <<'PY'
import struct, sys
db, dbx = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
open(sys.argv[3], "wb").write(struct.pack("<IIII", len(db), len(dbx), 16, 16 + len(db)) + db + dbx)
PY
mkpe "$WORK/shim-lists.efi" --add-section .vendor_cert="$WORK/vc-lists.bin" --add-section .sbat="$WORK/shim.csv" \
    --add-section .sbatlevel="$WORK/level.bin"
sign db "$WORK/shim-lists.efi" "$WORK/shim-lists.signed"
sign other "$WORK/grub.efi" "$WORK/grub.other"
accepted_with "vendor_db: a certificate in shim's built-in list accepts" "chains to CN=reprosign test other (vendor_db)" \
    "$REPROSIGN" chain "${DB[@]}" "$WORK/shim-lists.signed" "$WORK/grub.other"
accepted_with "vendor_db: a hash in shim's built-in list accepts" "hash .* is in vendor_db" \
    "$REPROSIGN" chain "${DB[@]}" "$WORK/shim-lists.signed" "$WORK/grub.other" "$WORK/kernel.efi"
refused_with "vendor_dbx: a hash in shim's built-in deny list refuses" "hash .* is in vendor_dbx" \
    "$REPROSIGN" chain "${DB[@]}" "$WORK/shim-lists.signed" "$WORK/grub-2col.signed"
# shim checks its own .sbat against the level first, and stops.
printf 'sbat,1,2030010100\nshim,5\ngrub,4\n' >"$WORK/shim5.level"
refused_with "SBAT: a level that revokes shim itself stops it" "shim's own SBAT self-check" \
    "$REPROSIGN" chain "${DB[@]}" --sbat-level "$WORK/shim5.level" "$WORK/shim.signed" "$WORK/grub.signed"

# 9b. The same inputs from a variable store, written by efi shim-var with
#     the attributes shim requires (NV|BS, not RT).
TEMPLATE=/usr/share/OVMF/OVMF_VARS_4M.fd
if [ -r "$TEMPLATE" ]; then
    "$REPROSIGN" efi enroll --vars "$TEMPLATE" --pk "$WORK/db.crt" --kek "$WORK/db.crt" --db "$WORK/db.crt" \
        --timestamp 1700000000 --output "$WORK/vars.fd"
    check "efi shim-var writes MokList" "$REPROSIGN" efi shim-var --vars "$WORK/vars.fd" --name MokList \
        "$WORK/mok.esl" --output "$WORK/vars-mok.fd"
    check "efi shim-var writes SbatLevel" "$REPROSIGN" efi shim-var --vars "$WORK/vars-mok.fd" --name SbatLevel \
        "$WORK/newer.level" --output "$WORK/vars-level.fd"
    check "shim's variables are NV,BS without RT" bash -c "
        '$REPROSIGN' efi list --vars '$WORK/vars-level.fd' | grep -q '^MokList 605dab50-e046-4300-abb6-3dd810dd8b23 NV,BS ' &&
        '$REPROSIGN' efi list --vars '$WORK/vars-level.fd' | grep -q '^SbatLevel 605dab50-.* NV,BS '"
    refuses "efi shim-var: a MokList that is not a signature list" "$WORK/bad.fd" "$REPROSIGN" efi shim-var \
        --vars "$WORK/vars.fd" --name MokList "$WORK/newer.level" --output "$WORK/bad.fd"
    refuses "efi shim-var: an unknown variable" "$WORK/bad.fd" "$REPROSIGN" efi shim-var \
        --vars "$WORK/vars.fd" --name MokFoo "$WORK/mok.esl" --output "$WORK/bad.fd"
    accepted_with "chain --vars reads MokList" "chains to CN=reprosign test mok (MokListRT)" \
        "$REPROSIGN" chain --vars "$WORK/vars-mok.fd" "$WORK/shim.signed" "$WORK/grub.mok"
    refused_with "chain --vars reads SbatLevel" "grub generation 4 is revoked" \
        "$REPROSIGN" chain --vars "$WORK/vars-level.fd" "$WORK/shim.signed" "$WORK/grub.mok"
    printf '\001' >"$WORK/one"
    "$REPROSIGN" efi shim-var --vars "$WORK/vars-mok.fd" --name MokSBState "$WORK/one" --output "$WORK/vars-insecure.fd"
    accepted_with "chain --vars: MokSBState turns shim's checks off" "shim validation disabled (MokSBState)" \
        "$REPROSIGN" chain --vars "$WORK/vars-insecure.fd" "$WORK/shim.signed" "$WORK/grub.byrevoked"
    "$REPROSIGN" efi shim-var --vars "$WORK/vars-mok.fd" --name MokPolicy "$WORK/one" --output "$WORK/vars-nx.fd"
    refused_with "chain --vars: MokPolicy REQUIRE_NX refuses an image without NX_COMPAT" "MokPolicy requires NX" \
        "$REPROSIGN" chain --vars "$WORK/vars-nx.fd" "$WORK/shim.signed" "$WORK/grub.mok"
    "$REPROSIGN" efi shim-var --vars "$WORK/vars-mok.fd" --name MokDBState "$WORK/one" --output "$WORK/vars-nodb.fd"
    sign db "$WORK/grub.efi" "$WORK/grub.dbsigned"
    refused_with "chain --vars: MokIgnoreDB makes shim skip db" "chains to no certificate" \
        "$REPROSIGN" chain --vars "$WORK/vars-nodb.fd" "$WORK/shim.signed" "$WORK/grub.dbsigned"
fi

# 10. Module keyrings: .machine (MokList), .platform (db), builtin, and
#     revocation by the module's SHA-256 in dbx or MokListX. The module is
#     a small ELF relocatable object (tests/tools/mkko.py): the rules look
#     at its signature and bytes, never at what it would do, so this runs
#     without Debian's kernel (test_module and the boots take real ones).
python3 "$TESTS_DIR/tools/mkko.py" "$WORK/u.ko"
mkdir -p "$WORK/m-mok" "$WORK/m-db" "$WORK/m-none" "$WORK/m-foreign"
sign mok "$WORK/u.ko" "$WORK/m-mok/a.ko"
sign db "$WORK/u.ko" "$WORK/m-db/a.ko"
cp "$WORK/u.ko" "$WORK/m-none/a.ko"
sign other "$WORK/u.ko" "$WORK/m-foreign/a.ko"
CHAIN=("$WORK/shim.signed" "$WORK/grub.mok" "$WORK/kernel.signed")
accepted_with "modules: a MOK-signed module loads (.machine)" "modules .*: OK, 1 verified .*machine 1" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-mok"
accepted_with "modules: a db-signed module loads (.platform)" "modules .*: OK, 1 verified .*platform 1" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-db"
accepted_with "modules: the build key (--kernel-keys)" "modules .*: OK, 1 verified (.builtin_trusted_keys 1" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-foreign" \
    --kernel-keys "$WORK/other.crt"
# The build key, read out of the kernel image (the last stage) as Linux
# builds it in: a bzImage's compressed payload, or an arm64 Image, holds
# the certificate list of certs/system_certificates.S
# (tests/tools/mkbzimage.py).
bz() {  # bz NAME [payload options...]: $WORK/NAME.bz, signed by the vendor key
    local name=$1; shift
    python3 "$TESTS_DIR/tools/mkbzimage.py" payload "$WORK/$name.payload" "$@" &&
        mkpe "$WORK/$name.efi" --sections 1 --add-section .payload="$WORK/$name.payload" &&
        python3 "$TESTS_DIR/tools/mkbzimage.py" header "$WORK/$name.efi" "$WORK/$name.payload" ${BZ_HEADER:-} &&
        sign vendor "$WORK/$name.efi" "$WORK/$name.bz"
}
bz_chain() { "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "$WORK/shim.signed" "$WORK/grub.mok" "$WORK/$1.bz" --modules "$2" "${@:3}"; }
other_name=$(openssl x509 -in "$WORK/other.crt" -noout -ext subjectKeyIdentifier | tail -n 1 | tr -d ' :' | tr 'A-F' 'a-f')
for z in xz zstd gzip; do
    bz "bz-$z" --cert "$WORK/other.der" --compress "$z"
    accepted_with "modules: the build key read out of a $z-compressed kernel image (.builtin_trusted_keys)" \
        "kernel image .*bz-$z.bz: 'reprosign test other: $other_name'" bz_chain "bz-$z" "$WORK/m-foreign"
done
BZ_HEADER=--arm64 bz a64 --cert "$WORK/other.der" --compress none --align 256
accepted_with "modules: the build key read out of an arm64 Image (uncompressed; .align 8 is 256 bytes there)" \
    "kernel image .*a64.bz: 'reprosign test other: $other_name'" bz_chain a64 "$WORK/m-foreign"
BZ_HEADER=--riscv64 bz rv64 --cert "$WORK/other.der" --compress none --align 256
accepted_with "modules: the build key read out of a RISC-V Image (uncompressed)" \
    "kernel image .*rv64.bz: 'reprosign test other: $other_name'" bz_chain rv64 "$WORK/m-foreign"
# EFI zboot (Debian's loong64 kernels; arm64 and RISC-V elsewhere): the
# header gives the payload, compressed as the name it gives says.
for z in xz:xzkern zstd:zstd22 gzip:gzip; do
    BZ_HEADER="--zboot ${z#*:}" bz "zb-${z%:*}" --cert "$WORK/other.der" --compress "${z%:*}" --align 256
    accepted_with "modules: the build key read out of an EFI zboot image, ${z#*:}" \
        "kernel image .*zb-${z%:*}.bz: 'reprosign test other: $other_name'" bz_chain "zb-${z%:*}" "$WORK/m-foreign"
done
BZ_HEADER="--zboot lz4" bz zb-lz4 --cert "$WORK/other.der" --compress lz4
refused_with "kernel image: an EFI zboot payload compressed otherwise is refused, pointing at --kernel-keys" \
    "zb-lz4.bz: its kernel is compressed with neither xz, zstd nor gzip (it starts 02 21 4c 18): give its certificates with --kernel-keys" \
    bz_chain zb-lz4 "$WORK/m-foreign"
BZ_HEADER="--zboot zstd22 --payload-length 99999999" bz zb-past --cert "$WORK/other.der" --compress zstd
refused_with "kernel image: an EFI zboot payload past the end of the file is refused" \
    "zb-past.bz: its EFI zboot header's payload (100000003 bytes at [0-9]*) does not fit in its [0-9]* bytes" \
    bz_chain zb-past "$WORK/m-foreign"
BZ_HEADER="--zboot zstd22-with-a-name-too-long-for-it" bz zb-name --cert "$WORK/other.der" --compress zstd
refused_with "kernel image: an EFI zboot header whose compression's name is not terminated is refused" \
    "zb-name.bz: its EFI zboot header's compression type is not a string" bz_chain zb-name "$WORK/m-foreign"
BZ_HEADER="--zboot xzkern" bz zb-size --cert "$WORK/other.der" --corrupt wrong-size
refused_with "kernel image: an EFI zboot payload whose size disagrees with its size word is refused" \
    "zb-size.bz: its kernel decompressed to [0-9]* bytes where the image says" bz_chain zb-size "$WORK/m-foreign"
bz bz-two --cert "$WORK/db.der" --cert "$WORK/other.der"
accepted_with "modules: every certificate of the built-in list is a key" \
    "kernel image .*bz-two.bz: 'reprosign test db: [0-9a-f]*', 'reprosign test other: $other_name'" \
    bz_chain bz-two "$WORK/m-foreign"
refused_with "modules: --kernel-keys replaces the image's built-in keys" "a.ko: REFUSED.*in no keyring" \
    bz_chain bz-xz "$WORK/m-foreign" --kernel-keys "$WORK/db.crt"
bz bz-nosize --cert "$WORK/other.der" --corrupt no-size-word
refused_with "kernel image: certificates without their length word are no list" \
    "bz-nosize.bz: no built-in certificate list (system_certificate_list, at most 1048576 bytes) in the decompressed kernel" \
    bz_chain bz-nosize "$WORK/m-foreign"
bz bz-twolists --cert "$WORK/other.der" --corrupt two-lists
refused_with "kernel image: two certificate lists are refused" "bz-twolists.bz: two built-in certificate lists" \
    bz_chain bz-twolists "$WORK/m-foreign"
bz bz-size --cert "$WORK/other.der" --corrupt wrong-size
refused_with "kernel image: a payload whose size disagrees with the image's is refused" \
    "bz-size.bz: its kernel decompressed to [0-9]* bytes where the image says" bz_chain bz-size "$WORK/m-foreign"
bz bz-corrupt --cert "$WORK/other.der" --corrupt corrupt
refused_with "kernel image: a corrupt payload is refused" "bz-corrupt.bz: decompressed: corrupt stream: " \
    bz_chain bz-corrupt "$WORK/m-foreign"
bz bz-lz4 --cert "$WORK/other.der" --compress lz4
refused_with "kernel image: a payload compressed otherwise is refused, pointing at --kernel-keys" \
    "bz-lz4.bz: its kernel is compressed with neither xz, zstd nor gzip (it starts 02 21 4c 18): give its certificates with --kernel-keys" \
    bz_chain bz-lz4 "$WORK/m-foreign"
BZ_HEADER="--payload-length 99999999" bz bz-past --cert "$WORK/other.der"
refused_with "kernel image: a payload past the end of the file is refused" \
    "bz-past.bz: its setup header's payload (99999999 bytes at [0-9]*) does not fit in its [0-9]* bytes" \
    bz_chain bz-past "$WORK/m-foreign"
BZ_HEADER="--protocol 0x0206" bz bz-old --cert "$WORK/other.der"
refused_with "kernel image: boot protocol 2.06 has no payload fields" "bz-old.bz: boot protocol 2.06 has no payload fields" \
    bz_chain bz-old "$WORK/m-foreign"
bz bz-bomb --bomb 600
refused_with "kernel image: a payload that decompresses past the limit is refused, with the limit" \
    "bz-bomb.bz: decompressed: too large (over 536870912 bytes)" bz_chain bz-bomb "$WORK/m-foreign"
refused_with "modules: a last stage that is no kernel image leaves .builtin_trusted_keys empty, and says so" \
    "the last stage is no kernel image it can read, and no --kernel-keys" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-foreign"
refused_with "modules: unsigned is refused under lockdown" "LOCKDOWN_MODULE_SIGNATURE" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-none"
refused_with "modules: a foreign key is refused" "in no keyring" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-foreign"
# A module changed after signing: its key is found, the signature fails
# (-EKEYREJECTED), and that, not a missing key, is the reason.
mkdir -p "$WORK/m-changed" && cp "$WORK/m-mok/a.ko" "$WORK/m-changed/a.ko"
printf 'X' | dd of="$WORK/m-changed/a.ko" bs=1 seek=100 conv=notrunc status=none
refused_with "modules: a changed module is refused by its own key, not for a missing one" \
    "a.ko: REFUSED by the kernel: its signer's key is in .machine, but the signature does not verify with it (.*over the module bytes.*): Key was rejected by service" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-changed"
python3 "$TESTS_DIR/tools/esl-entry.py" file "$WORK/m-mok/a.ko" "$WORK/mod-hash.esl"
refused_with "modules: the module's SHA-256 in dbx revokes it" "is blacklisted" \
    "$REPROSIGN" chain "${DB[@]}" --dbx "$WORK/mod-hash.esl" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-mok"
refused_with "modules: the module's SHA-256 in MokListX revokes it" "is blacklisted" \
    "$REPROSIGN" chain "${DB[@]}" --mokx "$WORK/mod-hash.esl" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-mok"
# Compressed modules, as trixie ships them (name.ko.xz): Linux verifies the
# decompressed bytes, and so does chain, for each compression it takes.
mkdir -p "$WORK/m-zip" "$WORK/m-zip-none" "$WORK/m-bad-xz" "$WORK/m-fake-xz"
xz -c "$WORK/m-mok/a.ko" >"$WORK/m-zip/a.ko.xz"
zstd -q -c "$WORK/m-mok/a.ko" >"$WORK/m-zip/b.ko.zst"
gzip -n -c "$WORK/m-mok/a.ko" >"$WORK/m-zip/c.ko.gz"
accepted_with "modules: xz, zstd and gzip-compressed modules verify as the kernel decompresses them" \
    "modules .*: OK, 3 verified .*machine 3" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-zip"
xz -c "$WORK/u.ko" >"$WORK/m-zip-none/a.ko.xz"
refused_with "modules: an unsigned module is refused compressed too" "a.ko.xz: REFUSED.*LOCKDOWN_MODULE_SIGNATURE" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-zip-none"
refused_with "modules: the decompressed module's SHA-256 in dbx revokes the compressed one" "a.ko.xz: REFUSED.*is blacklisted" \
    "$REPROSIGN" chain "${DB[@]}" --dbx "$WORK/mod-hash.esl" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-zip"
head -c "$(($(stat -c %s "$WORK/m-zip/a.ko.xz") / 2))" "$WORK/m-zip/a.ko.xz" >"$WORK/m-bad-xz/a.ko.xz"
refused_with "modules: a truncated .ko.xz is refused, named" "m-bad-xz/a.ko.xz: REFUSED.*a.ko.xz: decompressed: corrupt stream: " \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-bad-xz"
mkdir -p "$WORK/m-bomb" && head -c 600M /dev/zero | xz -1 >"$WORK/m-bomb/a.ko.xz"
refused_with "modules: a .ko.xz that decompresses past the limit is refused, with the limit" \
    "m-bomb/a.ko.xz: REFUSED.*a.ko.xz: decompressed: too large (over 536870912 bytes)" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-bomb"
mkdir -p "$WORK/m-empty/sub" && cp "$WORK/m-mok/a.ko" "$WORK/m-empty/sub/a.ko.p7s"
refused_with "modules: a directory with no module in it fails, saying so (a mistyped path must not pass)" \
    "m-empty: FAILED, no kernel module (\*.ko, \*.ko.xz, \*.ko.zst, \*.ko.gz) under it" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-empty"
cp "$WORK/m-mok/a.ko" "$WORK/m-fake-xz/a.ko.xz"
refused_with "modules: a .ko.xz that is not compressed is refused" "a.ko.xz: REFUSED.*not compressed with xz, zstd or gzip" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-fake-xz"
finish

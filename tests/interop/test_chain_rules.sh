#!/bin/bash
# chain against the rules of shim 16.1, Debian's GRUB 2.06 and Linux 6.1,
# one case per point where a real boot and a plain db/dbx reading differ.
# Each case names the rule the output must cite. The kernel's module
# keyrings and the keys built into a kernel image: test_chain_modules.
. "$TESTS_DIR/lib.sh"
need_tool python3
. "$TESTS_DIR/interop/chain_rules_lib.sh"

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
finish

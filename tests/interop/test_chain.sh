#!/bin/bash
# Boot chains: firmware db/dbx -> a shim carrying .vendor_cert (and
# .sbatlevel) -> images signed by the vendor key -> kernel modules. A
# synthetic shim built from test keys, then Debian's real shim with the
# helpers its key signs.
. "$TESTS_DIR/lib.sh"
need_tool python3
mkpe() { python3 "$TESTS_DIR/tools/mkpe.py" "$@"; }
make_key db; make_key vendor; make_key other

# cert_table: u32 authorized size, u32 deauthorized size, u32 authorized
# offset, u32 deauthorized offset, then the DER certificate and the ESL.
vendor_cert() {  # vendor_cert OUT CERT.der [DBX.esl]
    python3 - "$@" <<'PY'
import struct, sys
cert = open(sys.argv[2], "rb").read()
dbx = open(sys.argv[3], "rb").read() if len(sys.argv) > 3 else b""
open(sys.argv[1], "wb").write(struct.pack("<IIII", len(cert), len(dbx), 16, 16 + len(cert)) + cert + dbx)
PY
}
# .sbatlevel: u32 version, u32 previous offset, u32 latest offset (from
# the end of the version field), then the two NUL-terminated CSVs.
sbatlevel() {  # sbatlevel OUT PREVIOUS LATEST
    python3 - "$@" <<'PY'
import struct, sys
prev, latest = sys.argv[2].encode() + b"\0", sys.argv[3].encode() + b"\0"
open(sys.argv[1], "wb").write(struct.pack("<III", 0, 8, 8 + len(prev)) + prev + latest)
PY
}

printf 'sbat,1,SBAT Version,sbat,1,https://github.com/rhboot/shim/blob/main/SBAT.md\ngrub,3,Free Software Foundation,grub,2.06,https://www.gnu.org/software/grub/\n' >"$WORK/grub3.csv"
printf 'sbat,1,SBAT Version,sbat,1,https://github.com/rhboot/shim/blob/main/SBAT.md\ngrub,4,Free Software Foundation,grub,2.12,https://www.gnu.org/software/grub/\n' >"$WORK/grub4.csv"
sbatlevel "$WORK/level.bin" $'sbat,1,2023012900\nshim,2\ngrub,4\n' $'sbat,1,2024010900\nshim,4\ngrub,5\n'

mkpe "$WORK/next.efi" --sections 2 --add-section .sbat="$WORK/grub4.csv"
mkpe "$WORK/old.efi" --sections 2 --add-section .sbat="$WORK/grub3.csv"
mkpe "$WORK/nosbat.efi" --sections 1
"$REPROSIGN" sign --key "$WORK/vendor.key" --cert "$WORK/vendor.crt" "$WORK/next.efi" --output "$WORK/next.signed"
"$REPROSIGN" sign --key "$WORK/vendor.key" --cert "$WORK/vendor.crt" "$WORK/old.efi" --output "$WORK/old.signed"
"$REPROSIGN" sign --key "$WORK/other.key" --cert "$WORK/other.crt" "$WORK/next.efi" --output "$WORK/next.other"
"$REPROSIGN" sign --key "$WORK/vendor.key" --cert "$WORK/vendor.crt" "$WORK/nosbat.efi" --output "$WORK/nosbat.signed"
"$REPROSIGN" efi siglist --hash "$WORK/next.efi" --output "$WORK/next-hash.esl"
"$REPROSIGN" efi siglist --cert "$WORK/db.crt" --output "$WORK/db.esl"

vendor_cert "$WORK/vc.bin" "$WORK/vendor.der"
vendor_cert "$WORK/vc-dbx.bin" "$WORK/vendor.der" "$WORK/next-hash.esl"
mkpe "$WORK/shim.efi" --add-section .vendor_cert="$WORK/vc.bin"
mkpe "$WORK/shim-dbx.efi" --add-section .vendor_cert="$WORK/vc-dbx.bin"
mkpe "$WORK/shim-sbat.efi" --add-section .vendor_cert="$WORK/vc.bin" --add-section .sbatlevel="$WORK/level.bin"
for s in shim shim-dbx shim-sbat; do
    "$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK/$s.efi" --output "$WORK/$s.signed"
done

check "chain: shim in db, next stage signed by its vendor key" "$REPROSIGN" chain --db "$WORK/db.esl" \
    "$WORK/shim.signed" "$WORK/next.signed"
check "chain: each stage's line names its anchor" bash -c "
    '$REPROSIGN' chain --db '$WORK/db.esl' '$WORK/shim.signed' '$WORK/next.signed' | grep -q '^stage 2 .*chains to CN=reprosign test vendor'"
refuses "chain: next stage's hash in shim's vendor dbx" "" "$REPROSIGN" chain --db "$WORK/db.esl" \
    "$WORK/shim-dbx.signed" "$WORK/next.signed"
refuses "chain: next stage signed by a key neither in db nor shim's" "" "$REPROSIGN" chain --db "$WORK/db.esl" \
    "$WORK/shim.signed" "$WORK/next.other"
refuses "chain: shim itself not in db" "" "$REPROSIGN" chain --db "$WORK/next-hash.esl" "$WORK/shim.signed" "$WORK/next.signed"
refuses "chain: firmware dbx also applies to later stages" "" "$REPROSIGN" chain --db "$WORK/db.esl" \
    --dbx "$WORK/next-hash.esl" "$WORK/shim.signed" "$WORK/next.signed"
check "chain: vendor key only trusted after shim (verify --db alone rejects the next stage)" bash -c "
    ! '$REPROSIGN' verify '$WORK/next.signed' --db '$WORK/db.esl' >/dev/null 2>&1"
check "chain: SBAT generation at the level passes" "$REPROSIGN" chain --db "$WORK/db.esl" \
    "$WORK/shim-sbat.signed" "$WORK/next.signed"
refuses "chain: SBAT generation below shim's level is revoked" "" "$REPROSIGN" chain --db "$WORK/db.esl" \
    "$WORK/shim-sbat.signed" "$WORK/old.signed"
check "chain: the SBAT revocation is reported" bash -c "
    '$REPROSIGN' chain --db '$WORK/db.esl' '$WORK/shim-sbat.signed' '$WORK/old.signed' 2>/dev/null | grep -q 'grub generation 3 is revoked'"
refuses "chain: an image without .sbat under an SBAT level" "" "$REPROSIGN" chain --db "$WORK/db.esl" \
    "$WORK/shim-sbat.signed" "$WORK/nosbat.signed"
check "sbat prints the .sbat CSV" bash -c "'$REPROSIGN' sbat '$WORK/next.efi' | cmp -s - '$WORK/grub4.csv'"
refuses "sbat: an image without .sbat" "" "$REPROSIGN" sbat "$WORK/nosbat.efi"
check "chain --json" bash -c "'$REPROSIGN' chain --json --db '$WORK/db.esl' '$WORK/shim.signed' '$WORK/next.signed' | grep -q '\"valid\": true'"
head -c 12 "$WORK/vc.bin" >"$WORK/vc-short.bin"
mkpe "$WORK/shim-bad.efi" --add-section .vendor_cert="$WORK/vc-short.bin"
"$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$WORK/shim-bad.efi" --output "$WORK/shim-bad.signed"
refuses "chain: a truncated .vendor_cert" "" "$REPROSIGN" chain --db "$WORK/db.esl" "$WORK/shim-bad.signed" "$WORK/next.signed"

# Kernel modules under the kernel's keys.
MODDIR=$(ls -d "$FIXTURES"/kernel/lib/modules/*/kernel 2>/dev/null | head -n 1)
if [ -n "$MODDIR" ]; then
    mkdir -p "$WORK/mods/a" "$WORK/mods/b"
    i=0
    for m in $(find "$MODDIR" -name '*.ko' | sort | head -n 3); do
        i=$((i + 1))
        "$REPROSIGN" strip "$m" --output "$WORK/u$i.ko"
        "$REPROSIGN" sign --key "$WORK/vendor.key" --cert "$WORK/vendor.crt" "$WORK/u$i.ko" --output "$WORK/mods/a/m$i.ko"
    done
    check "chain --modules: every module verifies against the kernel keys" "$REPROSIGN" chain --db "$WORK/db.esl" \
        "$WORK/shim.signed" "$WORK/next.signed" --modules "$WORK/mods" --kernel-keys "$WORK/vendor.crt"
    "$REPROSIGN" sign --key "$WORK/other.key" --cert "$WORK/other.crt" "$WORK/u1.ko" --output "$WORK/mods/b/bad.ko"
    refuses "chain --modules: one module signed by another key" "" "$REPROSIGN" chain --db "$WORK/db.esl" \
        "$WORK/shim.signed" "$WORK/next.signed" --modules "$WORK/mods" --kernel-keys "$WORK/vendor.crt"
else
    echo "# no kernel fixtures here: module checks skipped"
fi

# Debian's shim: its .vendor_cert is the Debian Secure Boot CA, which
# signs the fb/mm helpers; firmware admits shim here by its hash.
need_fixtures shim
SHIM=$FIXTURES/root/shim-unsigned/usr/lib/shim/shimx64.efi
HELPERS=$FIXTURES/root/shim-helpers-amd64-signed/usr/lib/shim
"$REPROSIGN" efi siglist --hash "$SHIM" --output "$WORK/shim-hash.esl"
check "Debian shim -> fbx64 and mmx64 signed by the key it carries" "$REPROSIGN" chain --db "$WORK/shim-hash.esl" \
    "$SHIM" "$HELPERS/fbx64.efi.signed" "$HELPERS/mmx64.efi.signed"
check "Debian shim: chains to the Debian Secure Boot CA" bash -c "
    '$REPROSIGN' chain --db '$WORK/shim-hash.esl' '$SHIM' '$HELPERS/fbx64.efi.signed' | grep -q 'chains to CN=Debian Secure Boot CA'"
check "Debian shim: sbat --level shows its .sbatlevel" bash -c "'$REPROSIGN' sbat --level '$SHIM' | grep -q '^grub,'"
"$REPROSIGN" efi siglist --hash "$HELPERS/mmx64.efi.signed" --output "$WORK/mm-hash.esl"
refuses "Debian shim: mmx64 revoked by firmware dbx" "" "$REPROSIGN" chain --db "$WORK/shim-hash.esl" \
    --dbx "$WORK/mm-hash.esl" "$SHIM" "$HELPERS/fbx64.efi.signed" "$HELPERS/mmx64.efi.signed"
refuses "Debian shim: a test-key image is not admitted" "" "$REPROSIGN" chain --db "$WORK/shim-hash.esl" \
    "$SHIM" "$WORK/next.signed"
finish

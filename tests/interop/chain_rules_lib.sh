# Shared by test_chain_rules and test_chain_modules: keys, a 16.1-like shim
# (vendor certificate, .sbat, .sbatlevel) and an old one, signed by db;
# GRUB and a kernel signed by the vendor key, GRUB by a MOK too; the
# helpers that check a verdict and the rule it names. Source after lib.sh.
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
sign mok "$WORK/grub.efi" "$WORK/grub.mok"
siglist --cert "$WORK/mok.crt" --output "$WORK/mok.esl"

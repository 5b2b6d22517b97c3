#!/bin/bash
# Embedded trust is found by what the bytes are, not by a section's name
# (docs/security.md, "Declared trust"), on synthetic EFI images made by
# tests/tools/mkpe.py, so the network-free suite catches a break of each
# rule. Each image carries shim's struct cert_table (four little-endian
# words, then the CA shim would trust) somewhere, and its template leaves
# that CA out of trusted_certs:
# - in a section named .vendor_cert (the name rule caught this already);
# - in a section renamed .rdata;
# - behind a decoy .vendor_cert put first, holding an empty table;
# - a list of image hashes shim would trust (vendor_db), outside the
#   table's revocations;
# - two tables; a .vendor_cert, or shim's MOK mirror names, and no table.
# The twins, the same CA declared and allowed, or the hashes as the
# table's revocations (shim's vendor dbx, as Debian's has), are signed.
# test_custody.sh does the renaming and the decoy on Debian's own shim.
. "$TESTS_DIR/lib.sh"
need_tool python3
make_key db
make_key ca "/CN=undeclared vendor CA"
make_key other "/CN=a second vendor CA"
export SOURCE_DATE_EPOCH=1700000000
ca_fpr=$(sha256sum "$WORK/ca.der" | cut -d' ' -f1)
other_fpr=$(sha256sum "$WORK/other.der" | cut -d' ' -f1)

# blob.py OUT KIND...: shim's cert_table and what it points at.
#   table CERT.der [DBX]: authorized = the certificate, deauthorized = a
#                         SHA-256 list (DBX given) or nothing
#   empty:                a table of zeros (a shim built without a cert)
#   hashes:               a SHA-256 list alone (vendor_db of hashes)
#   mirror:               L"MokListRT", a name only shim's own code holds
cat >"$WORK/blob.py" <<'PY'
import struct, sys
SHA256 = bytes.fromhex("2616c4c14c509240aca941f936934328")
def hash_list():
    entry = bytes(16) + bytes(range(32))
    return SHA256 + struct.pack("<III", 28 + len(entry), 0, len(entry)) + entry
out, kind = sys.argv[1], sys.argv[2]
if kind == "table":
    cert = open(sys.argv[3], "rb").read()
    dbx = hash_list() if len(sys.argv) > 4 else b""
    data = struct.pack("<IIII", len(cert), len(dbx), 16, 16 + len(cert)) + cert + dbx
elif kind == "empty":
    data = bytes(16)
elif kind == "mirror":
    data = "MokListRT".encode("utf-16-le") + bytes(2)
else:
    data = hash_list()
open(out, "wb").write(data)
PY
blob() { python3 "$WORK/blob.py" "$@"; }
blob "$WORK/table" table "$WORK/ca.der"
blob "$WORK/table-dbx" table "$WORK/ca.der" dbx
blob "$WORK/other-table" table "$WORK/other.der"
blob "$WORK/empty" empty
blob "$WORK/hashes" hashes
blob "$WORK/mirror" mirror

image() {  # image NAME SECTION=FILE...: pkgs/NAME/app.efi
    local name=$1; shift
    mkdir -p "$WORK/pkgs/$name"
    python3 "$TESTS_DIR/tools/mkpe.py" "$WORK/pkgs/$name/app.efi" "${@/#/--add-section=}"
}
image named .vendor_cert="$WORK/table"
image renamed .rdata="$WORK/table"
image decoy .vendor_cert="$WORK/empty" .vendor_cert="$WORK/table"
image decoy-renamed .vendor_cert="$WORK/empty" .data2="$WORK/table"
image dbx .vendor_cert="$WORK/table-dbx"
image vendor-db .vendor_cert="$WORK/table" .data="$WORK/hashes"
image two-tables .vendor_cert="$WORK/table" .rdata="$WORK/other-table"
image no-table .vendor_cert="$WORK/empty"
image mirror .data="$WORK/mirror"
image plain

template() {  # template NAME [TRUSTED-FPR...]: $WORK/NAME.json
    local name=$1 certs=''; shift
    [ $# -eq 0 ] || certs=$(printf '"%s",' "$@")
    printf '{"packages": {"%s": {"trusted_certs": [%s], "files": [{"sig_type": "efi", "file": "app.efi"}]}}}\n' \
        "$name" "${certs%,}" >"$WORK/$name.json"
}
printf '%s\n%s\n' "$ca_fpr" "$other_fpr" >"$WORK/allow"
sign() {  # sign NAME [TRUSTED-FPR...]: sign-template, output $WORK/out-NAME
    local name=$1
    template "$@"
    "$REPROSIGN" sign-template "$WORK/$name.json" --packages "$WORK/pkgs" --key "$WORK/db.key" --cert "$WORK/db.crt" \
        --trusted-cert-allowlist "$WORK/allow" --output "$WORK/out-$name" --quiet
}
undeclared() {  # undeclared NAME WHAT: refused, naming the CA
    refuses "$2" "$WORK/out-$1" sign "$1"
    check "... names the CA and its SHA-256" grep -q "undeclared vendor CA (SHA-256 $ca_fpr)" "$WORK/.err"
}

undeclared named "a CA in a section named .vendor_cert, not in trusted_certs"
undeclared renamed "the same CA with its section renamed .rdata"
undeclared decoy "the same CA behind a decoy .vendor_cert put first"
undeclared decoy-renamed "the same CA renamed, behind a decoy .vendor_cert"
check "... found by content, at its file offset" grep -q "at file offset" "$WORK/.err"
for name in named renamed decoy decoy-renamed dbx; do
    rm -rf "$WORK/out-$name"   # where the old rule signed it, undeclared
    check "$name: the CA declared and allowed, the image is signed" sign "$name" "$ca_fpr"
done
refuses "a list of image hashes outside the table's revocations (vendor_db)" "$WORK/out-vendor-db" \
    sign vendor-db "$ca_fpr"
check "... says trusted_certs cannot declare them" grep -q "trusted_certs cannot declare" "$WORK/.err"
refuses "two certificate tables, both CAs declared" "$WORK/out-two-tables" sign two-tables "$ca_fpr" "$other_fpr"
check "... says so" grep -q "holds 2 certificate tables" "$WORK/.err"
refuses "a .vendor_cert holding no table that can be read" "$WORK/out-no-table" sign no-table
check "... says it looks like shim" grep -q "looks like shim" "$WORK/.err"
refuses "shim's MOK mirror names without any certificate table" "$WORK/out-mirror" sign mirror
check "... says it looks like shim" grep -q "looks like shim" "$WORK/.err"
check "an image that embeds nothing is signed with trusted_certs []" sign plain
check "... and its signature verifies" bash -c "
    '$REPROSIGN' attach-tree --quiet --signatures '$WORK/out-plain/signatures/plain' --root '$WORK/pkgs/plain' \
        --output '$WORK/signed-plain' --cert '$WORK/db.crt' &&
    '$REPROSIGN' verify --cert '$WORK/db.crt' '$WORK/signed-plain/app.efi'"
finish

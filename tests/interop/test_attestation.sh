#!/bin/bash
# Rebuilders' attestations (docs/rebuilds.md): `reprosign attestation
# verify` against Debian's own in-toto 1.3.1 on Debian's real unsigned
# packages (shim-unsigned, grub-efi-amd64-bin, fwupd-unsigned). Links made
# by in-toto-run with ed25519, RSA (rsassa-pss-sha256) and ECDSA P-256
# keys verify; every way to cheat is refused; and in-toto-verify, given a
# layout that requires the same step and key, agrees with reprosign on
# every link, valid or not. DSSE envelopes (which bookworm's in-toto does
# not write) are made with python3-cryptography over DSSE's PAE.
. "$TESTS_DIR/lib.sh"
need_tool in-toto-run; need_tool in-toto-verify; need_tool in-toto-keygen
need_fixtures templates

R=$REPROSIGN
PY=/usr/bin/python3   # Debian's, which has in-toto's and securesystemslib's modules
attest() { "$PY" "$TESTS_DIR/tools/attest.py" "$@"; }
cd "$WORK" || exit 1

# The packages, under their pool names without the epoch (how a rebuilder
# names what it rebuilt).
mkdir debs
for pkg in shim-unsigned grub-efi-amd64-bin fwupd-unsigned; do
    deb=$(bash "$TESTS_DIR/tools/newest-deb.sh" "$FIXTURES/debs" "$pkg")
    cp "$deb" "debs/$(basename "$deb" | sed 's/_[0-9]*%3a/_/')"
done
shim=$(cd debs && ls shim-unsigned_*.deb)

in-toto-keygen -t ed25519 owner >/dev/null
for t in ed25519 rsa ecdsa; do
    in-toto-keygen -t "$t" "r-$t" >/dev/null
    attest layout owner "r-$t.pub" "$t" "layout-$t"
done

# link KEYTYPE DEB: in-toto-run's link for DEB by r-KEYTYPE, in links/KEYTYPE-DEB/
link() {
    local d=links/$1-$2
    mkdir -p "$d" && (cd debs && in-toto-run -n rebuild -p "$2" -k "../r-$1" -t "$1" -d "../$d" -- true rebuild >/dev/null 2>&1)
    ls "$d"/rebuild.*.link
}

# agree DESCRIPTION ok|refused LINK KEYTYPE [NAME-AS]: reprosign and
# in-toto-verify (with r-KEYTYPE's layout; the link named as in-toto-run
# named NAME-AS) both accept or both refuse.
agree() {
    local what=$1 want=$2 file=$3 t=$4 as=${5:-$3} ours=ok theirs=ok
    $R attestation verify "$file" --key "r-$t.pub" >/dev/null 2>&1 || ours=refused
    rm -rf v && mkdir v && cp "$file" "v/$(basename "$as")"
    (cd v && in-toto-verify --layout "../layout-$t" --layout-keys ../owner.pub -t ed25519 >/dev/null 2>&1) || theirs=refused
    if [ "$ours" = "$want" ] && [ "$theirs" = "$want" ]; then pass "$what: both $want"; else
        fail "$what: expected $want, reprosign $ours, in-toto-verify $theirs"; fi
}

for t in ed25519 rsa ecdsa; do
    l=$(link "$t" "$shim")
    check "$t: in-toto-run's link over $shim verifies, with the package" \
        $R attestation verify "$l" --key "r-$t.pub" --product "debs/$shim"
    agree "$t: the link as written" ok "$l" "$t"
    eval "link_$t=\$l"
done
for deb in $(cd debs && ls grub-efi-amd64-bin_*.deb fwupd-unsigned_*.deb); do
    l=$(link ed25519 "$deb")
    check "ed25519: in-toto-run's link over $deb verifies, with the package" \
        $R attestation verify "$l" --key r-ed25519.pub --product "debs/$deb"
done
l=$link_ed25519

# Who signed: a key given twice, or under two names (its JSON file and
# the same key as PEM), counts once.
attest pem r-ed25519.pub r-ed25519.pem
$R attestation verify "$l" --key r-ed25519.pub --key r-ed25519.pub --key r-ed25519.pem --json >twice.json
check "a key given twice and as PEM counts as one key" grep -q '"distinct_keys": 1,' twice.json
check "... though all three files name it" test "$(grep -c '"key":' twice.json)" = 3
refuses "the wrong key: refused" "" $R attestation verify "$l" --key r-rsa.pub
check "... saying no signature by the key given verifies" grep -q "no signature by any of the 1 key given verifies" "$WORK/.err"
agree "ed25519's link checked with the RSA key's layout" refused "$l" rsa

# The signed body altered, each way in-toto-verify also sees.
for mode in digest list real type; do
    attest edit "$l" "$mode" "edit-$mode.link"
    refuses "signed body altered ($mode): refused" "" $R attestation verify "edit-$mode.link" --key r-ed25519.pub
    agree "signed body altered ($mode)" refused "edit-$mode.link" ed25519 "$l"
done
check "... a real number named as such" bash -c "$R attestation verify edit-real.link --key r-ed25519.pub 2>&1 | grep -q 'real number'"
attest edit "$l" reorder reorder.link
agree "members reordered and re-indented (the same canonical JSON)" ok reorder.link ed25519 "$l"
head -c 300 "$l" >truncated.link
refuses "a truncated link: refused" "" $R attestation verify truncated.link --key r-ed25519.pub
agree "a truncated link" refused truncated.link ed25519 "$l"
{ cat "$l"; head -c $((16 * 1024 * 1024)) /dev/zero | tr '\0' ' '; } >oversized.link
refuses "a link over 16 MiB: refused by its size" "" $R attestation verify oversized.link --key r-ed25519.pub
check "... saying so" grep -q "too large" "$WORK/.err"

# The product: of another package, version or architecture, or the right
# name with other bytes.
grub=$(cd debs && ls grub-efi-amd64-bin_*.deb)
refuses "another package's .deb: refused" "" $R attestation verify "$l" --key r-ed25519.pub --product "debs/$grub"
check "... saying no product bears its name" grep -q "no product is named" "$WORK/.err"
mkdir other
cp "debs/$shim" "other/${shim/_amd64/_arm64}"
cp "debs/$shim" "other/$(echo "$shim" | sed 's/_\([^_]*\)_amd64/_\1+1_amd64/')"
for f in other/*.deb; do
    refuses "the same bytes named $(basename "$f"): refused" "" $R attestation verify "$l" --key r-ed25519.pub --product "$f"
done
mkdir same-name && cp "debs/$shim" "same-name/$shim" && printf x >>"same-name/$shim"
refuses "the attested name with other bytes: refused" "" \
    $R attestation verify "$l" --key r-ed25519.pub --product "same-name/$shim"
check "... naming both digests" grep -q "attests $shim as sha256:.*, but same-name/$shim is sha256:" "$WORK/.err"

# DSSE: an in-toto Statement v1, signed over PAE.
sum=$(sha256sum "debs/$shim" | cut -c1-64)
attest dsse r-ed25519 "$shim" "$sum" env.json
check "a DSSE envelope's statement verifies, with the package" \
    $R attestation verify env.json --key r-ed25519.pub --product "debs/$shim"
attest dsse r-ed25519 "$shim" "$sum" env-type.json application/json
refuses "an envelope whose payloadType is not in-toto's: refused" "" $R attestation verify env-type.json --key r-ed25519.pub
"$PY" -c 'import json,sys,base64
e=json.load(open(sys.argv[1])); s=json.loads(base64.b64decode(e["payload"]))
s["subject"][0]["name"]="grub.deb"; e["payload"]=base64.b64encode(json.dumps(s).encode()).decode()
json.dump(e,open(sys.argv[2],"w"))' env.json env-payload.json
refuses "an envelope whose payload was changed: refused" "" $R attestation verify env-payload.json --key r-ed25519.pub
refuses "an envelope checked with another key: refused" "" $R attestation verify env.json --key r-rsa.pub

# ---- sign-template's precondition: k of n rebuilders, by key ----
make_key db
tpl=$(bash "$TESTS_DIR/tools/newest-deb.sh" "$FIXTURES/debs" shim-helpers-amd64-signed-template)
mkdir -p att/alice att/bob att/carol
cp "$link_ed25519" "att/alice/$shim.link"
policy=(--rebuilder alice=r-ed25519.pub --rebuilder bob=r-rsa.pub --rebuilder carol=r-ecdsa.pub --attestations att)
sign() {  # sign OUT [ARGS]: sign-template of shim's template from debs/
    local out=$1; shift
    $R sign-template "$tpl" --packages debs --key db.key --cert db.crt --no-signing-time --quiet --output "$out" "$@"
}
check "without a policy, the template signs (the twin)" sign plain
refuses "2 of 3 required, only alice attested: not signed" held sign held "${policy[@]}" --require-rebuilds 2
check "... naming who attested and who is missing" \
    grep -q "$shim: 1 of the 2 rebuilds required are attested (by: alice; missing: bob, carol)" "$WORK/.err"
cp "$link_rsa" "att/bob/$shim.link"
check "2 of 3 required, alice and bob attested: signed" sign signed "${policy[@]}" --require-rebuilds 2
check "... the very signatures signed without the policy" cmp plain/signatures.tar.gz signed/signatures.tar.gz
refuses "3 of 3 required: not signed" held3 sign held3 "${policy[@]}" --require-rebuilds 3
# carol rebuilt other bytes under the same name: a refusal, whatever k.
mkdir -p carol-debs && cp "same-name/$shim" carol-debs/
(cd carol-debs && in-toto-run -n rebuild -p "$shim" -k ../r-ecdsa -t ecdsa -d ../att/carol -- true rebuild >/dev/null 2>&1)
mv att/carol/rebuild.*.link "att/carol/$shim.link"
refuses "carol attests another digest: refused even with k met" refused sign refused "${policy[@]}" --require-rebuilds 1
check "... saying carol disagrees, with both digests" \
    grep -q "$shim: refused, never to be signed: rebuilder carol attests $shim as sha256:.*, but the .deb to be signed is sha256:" "$WORK/.err"
rm "att/carol/$shim.link"
# A file in alice's directory signed by bob's key counts for nobody.
cp "$link_rsa" "att/alice/$shim.link"
refuses "alice's directory holding bob's attestation: alice has not attested" held-b sign held-b "${policy[@]}" --require-rebuilds 2
cp "$link_ed25519" "att/alice/$shim.link"
refuses "two rebuilder names for one key: refused" "" sign twice --rebuilder alice=r-ed25519.pub \
    --rebuilder alias=r-ed25519.pem --attestations att --require-rebuilds 2
check "... naming both" grep -q "rebuilders alice and alias have the same key" "$WORK/.err"
ln -s ../att/alice att/dave
refuses "a rebuilder's directory that is a symlink: not read" held-d sign held-d --rebuilder dave=r-ed25519.pub \
    --attestations att --require-rebuilds 1
rm att/dave
refuses "an unpacked root cannot be attested" "" $R sign-template "$tpl" --packages "$FIXTURES/root" --key db.key \
    --cert db.crt --output unpacked "${policy[@]}" --require-rebuilds 1

finish

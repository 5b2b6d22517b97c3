#!/bin/bash
# Every --json document, from real inputs (Debian's signed shim, GRUB,
# kernel and modules, OVMF's variable stores, a SoftHSM2 token, a signing
# service that signs Debian's shim template, its transparency log),
# validated against its JSON Schema in docs/schemas/ with Debian's
# python3-jsonschema, and against docs/json.md's convention (json_check.py):
# no null, digests ALG:HEX, times ISO 8601 UTC. Mutated documents must fail.
. "$TESTS_DIR/lib.sh"
need_fixtures shim
need_fixtures bootchain
. "$TESTS_DIR/interop/service_lib.sh"
need_tool jq; need_tool dpkg-source; need_tool softhsm2-util; need_tool pkcs11-tool
MSVARS=/usr/share/OVMF/OVMF_VARS_4M.ms.fd
[ -r "$MSVARS" ] || skip "ovmf is not installed"
MODULE=/usr/lib/softhsm/libsofthsm2.so
[ -e "$MODULE" ] || skip "$MODULE is not installed"
# Debian's python3 (python3-jsonschema), also where another python3 is first on PATH.
PY=
for py in /usr/bin/python3 python3; do
    "$py" -c 'from jsonschema import Draft202012Validator' 2>/dev/null && { PY=$py; break; }
done
[ -n "$PY" ] || skip "python3-jsonschema is not installed"
SCHEMAS=$TESTS_DIR/../docs/schemas
JSON_MD=$TESTS_DIR/../docs/json.md
json_check() { "$PY" "$TESTS_DIR/interop/json_check.py" "$@"; }

SHIM=$FIXTURES/root/shim-signed/usr/lib/shim/shimx64.efi.signed
GRUB=$FIXTURES/root/grub-efi-amd64-signed/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed
KERNEL=$(ls "$FIXTURES"/signed-kernel/boot/vmlinuz-* | head -n 1)
KO=$(ls "$FIXTURES"/signed-kernel/lib/modules/*/kernel/net/key/af_key.ko | head -n 1)
FBX=$FIXTURES/root/shim-unsigned/usr/lib/shim/fbx64.efi
DOCS=$WORK/docs
mkdir -p "$DOCS"

# doc SCHEMA NAME STATUS COMMAND...: runs COMMAND, which must exit STATUS
# and print a document, kept as DOCS/SCHEMA.NAME.json.
doc() {
    local schema=$1 name=$2 want=$3 rc=0; shift 3
    "$@" >"$DOCS/$schema.$name.json" 2>"$WORK/doc.err" || rc=$?
    if [ "$rc" != "$want" ] || ! jq -e . "$DOCS/$schema.$name.json" >/dev/null 2>&1; then
        fail "$schema $name: exit status $rc (expected $want) or no JSON document"; sed 's/^/    /' "$WORK/doc.err"
        rm -f "$DOCS/$schema.$name.json"
    fi
}

# ---- list, digest, verify, sbat: Debian's images and a module, and our own signatures ----
bash "$TESTS_DIR/tools/vendor-cert.sh" "$FIXTURES/root/shim-unsigned/usr/lib/shim/shimx64.efi" "$WORK/debian-ca.der"
SOURCE_DATE_EPOCH=1700000000 "$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$FBX" --output "$WORK/fbx.signed"
SOURCE_DATE_EPOCH=1700000000 "$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" --hash sha384 "$FBX" \
    --output "$WORK/fbx384.signed" 2>/dev/null
mkdir -p "$WORK/mods"
"$REPROSIGN" strip "$KO" --output "$WORK/af_key.ko"
"$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" --keyid "$WORK/af_key.ko" --output "$WORK/mods/af_key.ko"
"$REPROSIGN" efi siglist --hash "$WORK/fbx.signed" --output "$WORK/fbx-hash.esl"
"$REPROSIGN" efi siglist --hash "$FBX" --output "$WORK/fbx-unsigned.esl"
"$REPROSIGN" efi siglist --cert "$WORK/db.crt" --output "$WORK/db.esl"

doc list shim 0 "$REPROSIGN" list "$SHIM" --json
doc list module 0 "$REPROSIGN" list "$KO" --json
doc list keyid-module 0 "$REPROSIGN" list "$WORK/mods/af_key.ko" --json
doc list signing-time 0 "$REPROSIGN" list "$WORK/fbx.signed" --json
doc list sha384 0 "$REPROSIGN" list "$WORK/fbx384.signed" --json
doc list unsigned 0 "$REPROSIGN" list "$FBX" --json
check "list --json: the signing time is SOURCE_DATE_EPOCH's, in ISO 8601 UTC" \
    jq -e '.signatures[0].signing_time == "2023-11-14T22:13:20Z"' "$DOCS/list.signing-time.json"
check "list --json: the signed digest is the one digest --json gives" bash -c "
    [ \"\$(jq -r '.signatures[0].signed_digest' '$DOCS/list.signing-time.json')\" = \"\$('$REPROSIGN' digest '$FBX' --json | jq -r .digest)\" ]"
for alg in sha256 sha384 sha512; do
    doc digest "$alg" 0 "$REPROSIGN" digest "$SHIM" --hash "$alg" --json
done
doc verify cert 0 "$REPROSIGN" verify "$GRUB" --cert "$WORK/debian-ca.der" --json
doc verify cert-unsigned 1 "$REPROSIGN" verify "$FBX" --cert "$WORK/debian-ca.der" --json
doc verify cert-wrong-ca 1 "$REPROSIGN" verify "$WORK/fbx.signed" --cert "$WORK/debian-ca.der" --json
doc verify firmware 0 "$REPROSIGN" verify "$SHIM" --vars "$MSVARS" --json
doc verify firmware-dbx 1 "$REPROSIGN" verify "$WORK/fbx.signed" --db "$WORK/db.esl" --dbx "$WORK/fbx-hash.esl" --json
doc verify firmware-unsigned-hash 0 "$REPROSIGN" verify "$FBX" --db "$WORK/fbx-unsigned.esl" --json
doc sbat shim 0 "$REPROSIGN" sbat "$SHIM" --json
doc sbat grub 0 "$REPROSIGN" sbat "$GRUB" --json
doc sbat level 0 "$REPROSIGN" sbat "$SHIM" --level --json

# ---- chain and efi list: OVMF's Microsoft variables, Debian's chain ----
doc chain debian 0 "$REPROSIGN" chain --vars "$MSVARS" "$SHIM" "$GRUB" "$KERNEL" --json
doc chain modules 0 "$REPROSIGN" chain --vars "$MSVARS" "$SHIM" "$GRUB" "$KERNEL" --modules "$WORK/mods" \
    --kernel-keys "$WORK/db.crt" --json
mkdir -p "$WORK/debian-mods" "$WORK/unsigned-mods" && cp "$KO" "$WORK/debian-mods/"
"$REPROSIGN" strip "$KO" --output "$WORK/unsigned-mods/af_key.ko"
# Debian's module by the build key chain reads out of Debian's kernel image.
doc chain modules-debian 0 "$REPROSIGN" chain --vars "$MSVARS" "$SHIM" "$GRUB" "$KERNEL" --modules "$WORK/debian-mods" --json
check "chain --json names the kernel image's built-in key" \
    jq -e '.modules.builtin_keys.from == "image" and (.modules.builtin_keys.certificates[0].kernel_name | startswith("Build time autogenerated kernel key: "))' \
    "$DOCS/chain.modules-debian.json"
doc chain modules-refused 1 "$REPROSIGN" chain --vars "$MSVARS" "$SHIM" "$GRUB" --modules "$WORK/unsigned-mods" --json
doc chain refused 1 "$REPROSIGN" chain --db "$WORK/db.esl" "$SHIM" "$GRUB" --json
doc efi-list vars 0 "$REPROSIGN" efi list --vars "$MSVARS" --json
doc efi-list vars-all 0 "$REPROSIGN" efi list --vars "$MSVARS" --all --json
doc efi-list esl-cert 0 "$REPROSIGN" efi list "$WORK/db.esl" --json
doc efi-list esl-hash 0 "$REPROSIGN" efi list "$WORK/fbx-hash.esl" --json
# A running machine's variables (efivarfs: NAME-GUID, the attributes word, then the data), from OVMF's Microsoft store.
GLOBAL=8be4df61-93ca-11d2-aa0d-00e098032b8c SECURITY=d719b2cb-3d3a-4596-a3bc-dad00e67656f
mkdir -p "$WORK/efivars"
for v in PK-$GLOBAL KEK-$GLOBAL db-$SECURITY dbx-$SECURITY; do
    "$REPROSIGN" efi db --vars "$MSVARS" --name "${v%%-*}" --output "$WORK/$v.esl"
    { printf '\x27\x00\x00\x00'; cat "$WORK/$v.esl"; } >"$WORK/efivars/$v"
done
printf '\x06\x00\x00\x00\x01' >"$WORK/efivars/SecureBoot-$GLOBAL"
printf '\x06\x00\x00\x00\x00' >"$WORK/efivars/SetupMode-$GLOBAL"
doc efi-list efivars 0 "$REPROSIGN" efi list --efivars "$WORK/efivars" --json
doc chain efivars 0 "$REPROSIGN" chain --efivars "$WORK/efivars" "$SHIM" "$GRUB" "$KERNEL" --json
doc verify efivars 0 "$REPROSIGN" verify "$SHIM" --efivars "$WORK/efivars" --json
check "efivarfs: one-byte values, no timestamps, the machine's Secure Boot state" bash -c "
    jq -e '[.variables[] | select(.name == \"SecureBoot\") | .value] == [1] and all(.variables[]; has(\"timestamp\") | not)' \
        '$DOCS/efi-list.efivars.json' &&
    jq -e '.machine.secure_boot and (.machine.setup_mode | not)' '$DOCS/chain.efivars.json'"
"$REPROSIGN" efi sign-var --name db --key "$WORK/db.key" --cert "$WORK/db.crt" --timestamp "2024-01-02 03:04:05" \
    "$WORK/db.esl" --output "$WORK/db.auth"
doc efi-list auth 0 "$REPROSIGN" efi list "$WORK/db.auth" --json

# ---- token list: SoftHSM2 with a key and its certificate ----
mkdir -p "$WORK/tokens"
printf 'directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n' "$WORK/tokens" >"$WORK/softhsm2.conf"
export SOFTHSM2_CONF=$WORK/softhsm2.conf
softhsm2-util --init-token --free --label "json test" --pin 1234 --so-pin 5678 >/dev/null
openssl pkey -in "$WORK/db.key" -outform DER -out "$WORK/db.key.der"
p11() { pkcs11-tool --module "$MODULE" --token-label "json test" --login --pin 1234 "$@" >/dev/null 2>&1; }
p11 --write-object "$WORK/db.key.der" --type privkey --id 01 --label "signing key" &&
    p11 --write-object "$WORK/db.der" --type cert --id 01 --label "signing key" || fail "cannot import into SoftHSM2"
doc token-list public 0 "$REPROSIGN" token list --module "$MODULE" --json
doc token-list login 0 env REPROSIGN_PKCS11_PIN=1234 "$REPROSIGN" token list --module "$MODULE" --login --json

# ---- service status: a request failed for now, one published, one held, then both published ----
repo=$WORK/repo
make_repo "$repo"
write_config js "$repo" ', "embargoed_suites": ["bookworm-embargoed"]'
write_requests "$WORK/js-requests.json" true
state=$WORK/state
"$REPROSIGN" service init --state "$state" --config "$WORK/js.json"
mv "$repo/pool" "$repo/pool.away"
"$REPROSIGN" service run --state "$state" --once 2>/dev/null
doc service-status failed 0 "$REPROSIGN" service status --state "$state" --json
mv "$repo/pool.away" "$repo/pool"
"$REPROSIGN" service retry --state "$state" --all-failed >/dev/null
"$REPROSIGN" service run --state "$state" --once 2>/dev/null
doc service-status held 0 "$REPROSIGN" service status --state "$state" --json
log=$WORK/js-log
cp "$log/checkpoint" "$WORK/old-checkpoint"
"$REPROSIGN" service release --state "$state" "$id2" >/dev/null 2>&1
doc service-status published 0 "$REPROSIGN" service status --state "$state" --json
check "the service documents show failed, held and published requests" bash -c "
    jq -e '[.requests[].status] | index(\"failed\")' '$DOCS/service-status.failed.json' &&
    jq -e '[.requests[].status] | index(\"held\") and index(\"published\")' '$DOCS/service-status.held.json' &&
    jq -e '[.requests[] | .outputs[]?.digest] | length > 0' '$DOCS/service-status.published.json'" 

# ---- the service's transparency log ----
vkey=$state/log.vkey
doc log-verify service 0 "$REPROSIGN" log verify "$log" --vkey "$vkey" --json
doc log-prove index 0 "$REPROSIGN" log prove "$log" 1 --json
"$REPROSIGN" log prove "$log" 1 >"$WORK/proof"
python3 "$TESTS_DIR/interop/tlog_entries.py" "$log" | sed -n 2p | tr -d '\n' >"$WORK/entry1"
doc log-prove entry 0 "$REPROSIGN" log prove "$log" --entry "$WORK/entry1" --json
doc log-verify-proof entry 0 "$REPROSIGN" log verify-proof --vkey "$vkey" --entry "$WORK/entry1" "$WORK/proof" --json
doc log-consistency service 0 "$REPROSIGN" log consistency "$log" "$WORK/old-checkpoint" --vkey "$vkey" --json
check "log prove --json: the proof's hashes are the text proof's, and the checkpoint is the log's" "$PY" -c "
import base64, json
d = json.load(open('$DOCS/log-prove.index.json'))
text = open('$WORK/proof').read().split('\n\n', 1)[0].splitlines()
assert text[1] == 'index 1', text
assert [base64.b64decode(l).hex() for l in text[2:]] == [h.split(':')[1] for h in d['proof']], (text, d)
assert d['checkpoint'] == open('$log/checkpoint').read()
assert d['size'] == int(d['checkpoint'].splitlines()[1])
"
consistency_as_text() {  # the --json document as `log consistency` prints it, for tlog_proof.py
    "$PY" - "$1" <<'PY'
import base64, json, sys
d = json.load(open(sys.argv[1]))
b64 = lambda h: base64.b64encode(bytes.fromhex(h.split(':')[1])).decode()
assert 0 < d['old']['size'] < d['new']['size'], d
print('old', d['old']['size'], b64(d['old']['root']))
print('new', d['new']['size'], b64(d['new']['root']))
for p in d['proof']:
    print(b64(p))
PY
}
consistency_as_text "$DOCS/log-consistency.service.json" >"$WORK/consistency.txt" || fail "log consistency --json: unreadable"
check "log consistency --json: the same proof as the text, which holds from the old tree to the new (RFC 9162)" bash -c "
    '$REPROSIGN' log consistency '$log' '$WORK/old-checkpoint' --vkey '$vkey' | cmp - '$WORK/consistency.txt' &&
    python3 '$TESTS_DIR/interop/tlog_proof.py' consistency <'$WORK/consistency.txt'"

# ---- a rebuilder's attestation: in-toto's own links, checked in ----
vec=$TESTS_DIR/fuzz/corpus/fuzz_attestation
printf 'reprosign test vector\n' >"$WORK/shim-unsigned_16.1-1_amd64.deb"
doc attestation-verify link 0 "$REPROSIGN" attestation verify "$vec/rebuild.5f03f482.link" --key "$vec/k-ed25519.pub" \
    --key "$vec/k-rsa.pub" --product "$WORK/shim-unsigned_16.1-1_amd64.deb" --json
doc attestation-verify dsse 0 "$REPROSIGN" attestation verify "$vec/env.json" --key "$vec/k-ed25519.pub" --json
doc attestation-verify wrong-key 1 "$REPROSIGN" attestation verify "$vec/rebuild.43145cc9.link" --key "$vec/k-ed25519.pub" \
    --product "$WORK/shim-unsigned_16.1-1_amd64.deb" --json

# ---- every document against its schema and the convention ----
for schema in "$SCHEMAS"/*.json; do
    name=$(basename "$schema" .json)
    docs=("$DOCS/$name".*.json)
    if [ ! -e "${docs[0]}" ]; then
        fail "$name: no real document was checked against docs/schemas/$name.json"; continue
    fi
    check "$name: ${#docs[@]} real documents validate against docs/schemas/$name.json and the convention" \
        json_check "$schema" "${docs[@]}"
    check "$name: docs/json.md describes it and names its schema" grep -q "schemas/$name.json" "$JSON_MD"
done
# Every command that takes --json has a schema.
for c in $("$REPROSIGN" --help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 {print $1}') "efi list"; do
    "$REPROSIGN" $c --help | grep -q -- '^  --json' || continue
    case $c in attestation) s=attestation-verify ;; token) s=token-list ;; service) s=service-status ;; log) s=log-verify ;; "efi list") s=efi-list ;; *) s=$c ;; esac
    check "$c --json has docs/schemas/$s.json" test -f "$SCHEMAS/$s.json"
done

# ---- the check can fail: mutated documents are refused ----
mutant() {  # mutant WHAT SCHEMA DOC JQ-FILTER [AGAINST]: the mutated document must fail
    local what=$1 schema=$2 src=$3 filter=$4 against=${5:-$SCHEMAS/$2.json}
    jq "$filter" "$DOCS/$schema.$src.json" >"$WORK/mutant.json" || { fail "$what: jq"; return; }
    if json_check "$against" "$WORK/mutant.json" >"$WORK/mutant.out" 2>&1; then
        fail "$what: accepted"
    else
        pass "$what: refused ($(head -n 1 "$WORK/mutant.out" | sed 's/^[^:]*: //'))"
    fi
}
check "an unchanged document passes" json_check "$SCHEMAS/list.json" "$DOCS/list.shim.json"
mutant "a digest without its algorithm" list shim '.signatures[0].signed_digest |= sub("^sha256:"; "")'
mutant "a digest in upper case" digest sha256 '.digest |= ascii_upcase'
mutant "a digest of the wrong length" log-verify service '.root += "00"'
mutant "a null where a member is unknown" list shim '.signatures[0].subject = null'
mutant "a null in a required member" chain debian '.stages[0].rule = null'
mutant "a time as Unix seconds" service-status published '.requests[0].arrived = 1733300000'
mutant "a time not in UTC" list signing-time '.signatures[0].signing_time |= sub("Z$"; "+01:00")'
mutant "a time that is no date" efi-list auth '.auth.timestamp = "2024-02-30T03:04:05Z"'
mutant "a member the schema does not know" verify firmware '.signatures[0].extra = true'
mutant "a required member left out" token-list login 'del(.tokens[0].objects[0].type)'
mutant "a verdict of invalid without its reason" verify firmware-dbx 'del(.reason)'
mutant "a bare hex digest in a free-text member" chain debian '.stages[0].accepted_by = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"'
# ... and the convention holds on its own, where a schema would let it pass.
echo '{}' >"$WORK/anything.json"
check "an unchanged document passes the convention alone" json_check "$WORK/anything.json" "$DOCS"/*.json
mutant "convention alone: a null" chain debian '.stages[0].rule = null' "$WORK/anything.json"
mutant "convention alone: a digest without its algorithm" list shim '.signatures[0].signed_digest |= sub("^sha256:"; "")' \
    "$WORK/anything.json"
mutant "convention alone: a digest in upper case" digest sha256 '.digest |= ascii_upcase' "$WORK/anything.json"
mutant "convention alone: a time as Unix seconds" service-status published '.requests[0].arrived = 1733300000' \
    "$WORK/anything.json"
mutant "convention alone: a time with a zone" efi-list auth '.auth.timestamp = "2024-01-02T03:04:05+01:00"' \
    "$WORK/anything.json"
finish

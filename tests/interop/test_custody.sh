#!/bin/bash
# Key custody on the build-time socket, attacked as a client on the
# machine would, with frames built by hand (tests/tools/rawframe.py):
# - a module key is no oracle: a chosen digest, a non-module, an unsealed
#   file or another module's bytes are all refused, and the log stays as it
#   was;
# - one key, one purpose: neither key signs the other's sig_type;
# - a trickling client loses its connection; one uid holds a bounded number;
# - the configuration refuses one key for two purposes.
# Legitimate signatures through the socket stay byte-identical to local ones.
. "$TESTS_DIR/lib.sh"
need_fixtures kernel
need_fixtures shim
need_tool python3
RAW="python3 $TESTS_DIR/tools/rawframe.py"

make_key db
make_key mod
export SOURCE_DATE_EPOCH=1700000000
module=$(find "$FIXTURES"/kernel/lib/modules/*/kernel -name '*.ko' | sort | head -n 1)
other=$(find "$FIXTURES"/kernel/lib/modules/*/kernel -name '*.ko' | sort | sed -n 2p)
"$REPROSIGN" strip "$module" --output "$WORK/m.ko"
"$REPROSIGN" strip "$other" --output "$WORK/other.ko"
cp "$FIXTURES/root/shim-unsigned/usr/lib/shim/fbx64.efi" "$WORK/app.efi"

sock=$WORK/sign.sock
config() {  # config FILE EFI-KEY MODULE-KEY
    cat >"$1" <<JSON
{
  "archive": "$WORK/no-archive",
  "requests": "$WORK/no-requests.json",
  "allow_unsigned_archive": true,
  "keys": {"efi": {"key": "$WORK/$2.key", "cert": "$WORK/$2.crt"},
           "linux-module": {"key": "$WORK/$3.key", "cert": "$WORK/$3.crt"}},
  "output": "$WORK/out",
  "log": "$WORK/log",
  "socket": {"path": "$sock", "allow_uids": [$(id -u)]},
  "poll_interval": 3600
}
JSON
}
mkdir -p "$WORK/out"

# ---- the configuration ----
config "$WORK/same.json" db db
refuses "one key for efi and linux-module is refused" "$WORK/same-state/state.db" \
    "$REPROSIGN" service init --state "$WORK/same-state" --config "$WORK/same.json"
config "$WORK/config.json" db mod
check "distinct keys are accepted" "$REPROSIGN" service init --state "$WORK/state" --config "$WORK/config.json"

"$REPROSIGN" service run --state "$WORK/state" 2>"$WORK/service.log" &
service_pid=$!
trap 'kill "$service_pid" 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
check "the service listens" test -S "$sock"
check "the service, holding keys, may write no core file" \
    test "$(prlimit --pid "$service_pid" --core --output SOFT,HARD --noheadings | awk '{print $1, $2}')" = "0 0"
check "the socket was made 0660 at bind, not changed through its path" \
    test "$(stat -c %a "$sock")" = 660

log_lines() { if [ -f "$WORK/log/checkpoint" ]; then sed -n 2p "$WORK/log/checkpoint"; else echo 0; fi; }

# ---- legitimate flows, byte for byte ----
"$REPROSIGN" sign --key "$WORK/mod.key" --cert "$WORK/mod.crt" --detached --output "$WORK/m.local.sig" "$WORK/m.ko"
check "a module signed through the socket" \
    "$REPROSIGN" sign --via "$sock" --cert "$WORK/mod.crt" --detached --output "$WORK/m.via.sig" "$WORK/m.ko"
check "... equals the local signature" same_bytes "$WORK/m.local.sig" "$WORK/m.via.sig"
"$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" --detached --output "$WORK/app.local.sig" "$WORK/app.efi"
check "an EFI image signed through the socket equals the local signature" bash -c "
    '$REPROSIGN' sign --via '$sock' --cert '$WORK/db.crt' --detached --output '$WORK/app.via.sig' '$WORK/app.efi' &&
    cmp '$WORK/app.local.sig' '$WORK/app.via.sig'"
check "the module's log entry records its sig_type, the digest signed and the peer" python3 -c "
import json,sys
import subprocess
e=[json.loads(l) for l in subprocess.check_output(['python3', '$TESTS_DIR/tools/tlog_entries.py', '$WORK/log']).decode().splitlines()]
m=[x for x in e if x.get('sig_type')=='linux-module']
assert len(m)==1, e
m=m[0]
assert m['format']=='module' and m['tbs_digest']==m['signed_digest'], m
assert m['client']['pid']>0 and m['client']['exe'].endswith('reprosign'), m
"
before=$(log_lines)

# A template of both sig_types through the socket: each file by its own key.
mkdir -p "$WORK/mixed/mixed-unsigned"
cp "$WORK/app.efi" "$WORK/m.ko" "$WORK/mixed/mixed-unsigned/"
echo '{"packages": {"mixed-unsigned": {"files": [{"sig_type": "efi", "file": "app.efi"}, {"sig_type": "linux-module", "file": "m.ko"}]}}}' \
    >"$WORK/mixed.json"
"$REPROSIGN" sign-template "$WORK/mixed.json" --packages "$WORK/mixed" --key "$WORK/db.key" --cert "$WORK/db.crt" \
    --module-key "$WORK/mod.key" --module-cert "$WORK/mod.crt" --output "$WORK/mixed-key" --quiet
check "sign-template --via with --module-cert: EFI and module files, each by its own key" \
    "$REPROSIGN" sign-template "$WORK/mixed.json" --packages "$WORK/mixed" --via "$sock" --cert "$WORK/db.crt" \
    --module-cert "$WORK/mod.crt" --output "$WORK/mixed-via" --quiet
check "... the same signatures as the keys themselves give" cmp "$WORK/mixed-key/signatures.tar.gz" "$WORK/mixed-via/signatures.tar.gz"
check "... and the module's was made by the module key" \
    cmp "$WORK/mixed-via/signatures/mixed-unsigned/m.ko.sig" "$WORK/m.local.sig"
before=$(log_lines)

# ---- the module key is no oracle ----
"$REPROSIGN" sign --prepare-offline --cert "$WORK/mod.crt" --output "$WORK/m.req" "$WORK/m.ko"
openssl x509 -in "$WORK/db.crt" -outform DER | openssl asn1parse -inform DER -strparse 4 -out "$WORK/tbs.der" -noout
chosen=$(sha256sum "$WORK/tbs.der" | cut -d' ' -f1)
answer_refused() {  # answer_refused "what" PATTERN rawframe-args...
    local what=$1 pattern=$2; shift 2
    local out
    out=$($RAW "$sock" "$@" 2>&1)
    if printf '%s' "$out" | grep -q '"ok": *false' && printf '%s' "$out" | grep -q "$pattern"; then
        pass "$what ($out)"
    else
        fail "$what: $out"
    fi
}
answer_refused "a module request for a chosen digest, with no module, is refused" "own bytes" \
    "$WORK/m.req" --set "image_digest=\"$chosen\"" --set "tbs_digest=\"$chosen\""
answer_refused "... and with a certificate's TBS attached as the 'module'" "attached image" \
    "$WORK/m.req" --set "image_digest=\"$chosen\"" --set "tbs_digest=\"$chosen\"" --set 'image="attached"' \
    --attach "$WORK/tbs.der"
answer_refused "... and with another module attached" "not the request's image_digest" \
    "$WORK/m.req" --set "image_digest=\"$chosen\"" --set "tbs_digest=\"$chosen\"" --set 'image="attached"' \
    --attach "$WORK/other.ko"
answer_refused "the right module in an unsealed file is refused" "sealed" \
    "$WORK/m.req" --set 'image="attached"' --attach "$WORK/m.ko" --unsealed
check "the right module in a sealed memfd, sent by hand, is signed" bash -c \
    "$RAW '$sock' '$WORK/m.req' --set 'image=\"attached\"' --attach '$WORK/m.ko' | grep -q '\"ok\": *true'"
check "the log gained exactly that one entry" test "$(log_lines)" = $((before + 1))
before=$(log_lines)

# ---- one key, one purpose ----
"$REPROSIGN" sign --prepare-offline --cert "$WORK/db.crt" --output "$WORK/m-db.req" "$WORK/m.ko"
answer_refused "a module request naming the EFI key's certificate is refused" "only its own sig_type" \
    "$WORK/m-db.req" --set 'image="attached"' --attach "$WORK/m.ko"
refuses "sign --via with the module key's certificate on an EFI image" "$WORK/cross.sig" \
    "$REPROSIGN" sign --via "$sock" --cert "$WORK/mod.crt" --detached --output "$WORK/cross.sig" "$WORK/app.efi"
refuses "sign --via with the EFI key's certificate on a module" "$WORK/cross2.sig" \
    "$REPROSIGN" sign --via "$sock" --cert "$WORK/db.crt" --detached --output "$WORK/cross2.sig" "$WORK/m.ko"
refuses "sign-blob --via on a module request (no module to read)" "$WORK/blob.value" \
    "$REPROSIGN" sign-blob "$WORK/m.req" --via "$sock" --output "$WORK/blob.value"
check "no refused request reached the log" test "$(log_lines)" = "$before"
check "the log verifies, pinned to the service's own log key (no Secure Boot key signs it)" \
    "$REPROSIGN" log verify "$WORK/log" --vkey "$WORK/state/log.vkey"
rc=0; "$REPROSIGN" log verify "$WORK/log" 2>/dev/null || rc=$?
check "... and log verify without --vkey is a usage error" test "$rc" = 2

# ---- what the image embeds, not only what files.json declares ----
bash "$TESTS_DIR/tools/vendor-cert.sh" "$FIXTURES/root/shim-unsigned/usr/lib/shim/shimx64.efi" "$WORK/debian-ca.der"
ca_fpr=$(sha256sum "$WORK/debian-ca.der" | cut -d' ' -f1)
mkdir -p "$WORK/pkgs" && ln -s "$FIXTURES/root/shim-unsigned" "$WORK/pkgs/shim-unsigned"
shim_template() {  # shim_template FILE [TRUSTED-FPR]
    local trusted=${2:+\"$2\"}
    printf '{"packages": {"shim-unsigned": {"trusted_certs": [%s], "files": [{"sig_type": "efi", "file": "usr/lib/shim/shimx64.efi"}]}}}\n' \
        "$trusted" >"$1"
}
shim_template "$WORK/undeclared.json"
refuses "a shim whose .vendor_cert CA its template leaves out of trusted_certs" "$WORK/undeclared-out" \
    "$REPROSIGN" sign-template "$WORK/undeclared.json" --packages "$WORK/pkgs" --key "$WORK/db.key" --cert "$WORK/db.crt" \
    --output "$WORK/undeclared-out"
check "... names the embedded certificate's subject and SHA-256" grep -q "Debian Secure Boot CA (SHA-256 $ca_fpr)" "$WORK/.err"
shim_template "$WORK/declared.json" "$ca_fpr"
echo "$ca_fpr" >"$WORK/allow"
check "declared in trusted_certs and on the allowlist, the shim is signed" \
    "$REPROSIGN" sign-template "$WORK/declared.json" --packages "$WORK/pkgs" --key "$WORK/db.key" --cert "$WORK/db.crt" \
    --trusted-cert-allowlist "$WORK/allow" --output "$WORK/declared-out" --quiet
# The same shim with its .vendor_cert renamed (8 bytes of its section
# header), and with a decoy .vendor_cert put first (.data.ident renamed,
# holding an empty table): shim finds its table through its own code, so
# the CA is found by content, wherever it lies, and is still undeclared.
shim=$FIXTURES/root/shim-unsigned/usr/lib/shim/shimx64.efi
for attack in rename decoy; do
    mkdir -p "$WORK/$attack/usr/lib/shim" && ln -s "$WORK/$attack" "$WORK/pkgs/$attack"
    if [ "$attack" = rename ]; then arg=.data2; else arg=.data.ident; fi
    python3 "$TESTS_DIR/tools/pe-section.py" "$attack" "$shim" "$WORK/$attack/usr/lib/shim/shimx64.efi" .vendor_cert "$arg"
    sed "s/shim-unsigned/$attack/" "$WORK/undeclared.json" >"$WORK/$attack-undeclared.json"
    refuses "Debian's shim, .vendor_cert $attack: its CA left out of trusted_certs" "$WORK/$attack-out" \
        "$REPROSIGN" sign-template "$WORK/$attack-undeclared.json" --packages "$WORK/pkgs" --key "$WORK/db.key" \
        --cert "$WORK/db.crt" --output "$WORK/$attack-out"
    check "... names the CA, found at its file offset" grep -q "Debian Secure Boot CA (SHA-256 $ca_fpr) at file offset" "$WORK/.err"
    sed "s/shim-unsigned/$attack/" "$WORK/declared.json" >"$WORK/$attack-declared.json"
    check "... declared and allowed, it is signed" "$REPROSIGN" sign-template "$WORK/$attack-declared.json" \
        --packages "$WORK/pkgs" --key "$WORK/db.key" --cert "$WORK/db.crt" --trusted-cert-allowlist "$WORK/allow" \
        --output "$WORK/$attack-declared-out" --quiet
done

# ---- starving the socket ----
out=$($RAW "$sock" "$WORK/m.req" --trickle 2>&1); rc=$?
check "a client trickling one byte a second loses its connection ($out)" test "$rc" = 3
out=$($RAW "$sock" --hold 128 2>&1)
check "one uid's 129th connection is refused with a reason ($out)" \
    bash -c "printf '%s' '$out' | grep -q 'most connections one uid may'"
check "the service still signs afterwards" \
    "$REPROSIGN" sign --via "$sock" --cert "$WORK/db.crt" --detached --output "$WORK/after.sig" "$WORK/app.efi"

finish

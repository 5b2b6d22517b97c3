#!/bin/bash
# Key custody on the archive face, each attack reproduced and refused:
# - a template of one source naming another source's binaries;
# - a request whose source is not the template's;
# - an embargoed suite reached through an alias (a symlink in dists/);
# - a state directory that already existed, world-readable;
# - a stale (replayed) export, and exports signed by expired or revoked keys;
# - the token PIN looked for in a child's environment.
. "$TESTS_DIR/lib.sh"
need_fixtures shim
. "$TESTS_DIR/interop/service_lib.sh"
need_tool dpkg-source; need_tool gpg

repo=$WORK/repo
make_repo "$repo"

# ---- source binding ----
foo_template() {  # foo_template OUT.deb: shim's template, claimed by source foo
    local t=$WORK/foo-template
    rm -rf "$t" && dpkg-deb -R "$template_deb" "$t"
    sed -i 's/^Package: .*/Package: foo-signed-template/; /^Source:/d' "$t/DEBIAN/control"
    echo "Source: foo" >>"$t/DEBIAN/control"
    mv "$t"/usr/share/code-signing/shim-helpers-amd64-signed-template "$t/usr/share/code-signing/foo-signed-template"
    # Its -signed source is foo-signed, as the service pins it (test_service_pin.sh).
    sed -i '1s/^shim-helpers-amd64-signed /foo-signed /' "$t/usr/share/code-signing/foo-signed-template/source-template/debian/changelog"
    sed -i 's/^\(Source\|Package\): shim-helpers-amd64-signed$/\1: foo-signed/' \
        "$t/usr/share/code-signing/foo-signed-template/source-template/debian/control"
    dpkg-deb -b "$t" "$1" >/dev/null
}
foo_template "$WORK/foo.deb"
mkdir -p "$WORK/pkgs" && cp "$unsigned_deb" "$WORK/pkgs/"
refuses "sign-template: a template of source foo naming shim's binaries" "$WORK/foo-cli" \
    "$REPROSIGN" sign-template "$WORK/foo.deb" --packages "$WORK/pkgs" --key "$WORK/db.key" --cert "$WORK/db.crt" \
    --output "$WORK/foo-cli"

cp "$WORK/foo.deb" "$repo/pool/main/s/foo-signed-template_${tversion}_amd64.deb"
index_repo "$repo"
foo_id=foo-signed-template_${tversion}_amd64
cat >"$WORK/foo-requests.json" <<JSON
{"packages": [
 {"package": "foo-signed-template", "source": "foo", "suite": "bookworm", "codename": "bookworm", "architecture": "amd64", "version": "$tversion"},
 {"package": "shim-helpers-amd64-signed-template", "source": "victim", "suite": "bookworm", "codename": "bookworm", "architecture": "amd64", "version": "$tversion"}
]}
JSON
gpg --batch --quiet --detach-sign -o "$WORK/foo-requests.json.sig" "$WORK/foo-requests.json"
write_config foo "$repo"
svc init --state "$WORK/foo-state" --config "$WORK/foo.json"
svc run --state "$WORK/foo-state" --once >/dev/null 2>&1
check "the service refuses the cross-source template" test "$(status_of "$WORK/foo-state" "$foo_id")" = failed
check "... naming the source" bash -c "'$REPROSIGN' service status --state '$WORK/foo-state' --json |
    grep -q 'built from source shim, not from the template.s source foo'"
check "the service refuses a request whose source is not the template's" test "$(status_of "$WORK/foo-state" "$id1")" = failed
check "nothing was published" test -z "$(ls -A "$WORK/foo-out")"

write_config foreign "$repo" ', "allowed_foreign_sources": {"foo": ["shim"]}'
cp "$WORK/foo-requests.json" "$WORK/foreign-requests.json"; cp "$WORK/foo-requests.json.sig" "$WORK/foreign-requests.json.sig"
svc init --state "$WORK/foreign-state" --config "$WORK/foreign.json"
svc run --state "$WORK/foreign-state" --once >/dev/null 2>&1
check "allowed_foreign_sources lets foo's template name shim's binaries" \
    test "$(status_of "$WORK/foreign-state" "$foo_id")" = published

# ---- embargo by identity ----
emb=$repo/dists/bookworm-embargoed
mkdir -p "$emb" && cp -r "$repo/dists/bookworm/main" "$emb/"
(cd "$repo" && apt-ftparchive -o APT::FTPArchive::Release::Suite=bookworm-embargoed \
    -o APT::FTPArchive::Release::Codename=bookworm-embargoed release dists/bookworm-embargoed >"$WORK/R" &&
    mv "$WORK/R" "$emb/Release" && gpg --batch --quiet --yes --detach-sign -o "$emb/Release.gpg" "$emb/Release")
ln -s bookworm-embargoed "$repo/dists/stable-embargoed"
cat >"$WORK/alias-requests.json" <<JSON
{"packages": [
 {"package": "shim-helpers-amd64-signed-template", "source": "shim", "suite": "stable-embargoed", "codename": "stable-embargoed", "architecture": "amd64", "version": "$tversion"}
]}
JSON
gpg --batch --quiet --detach-sign -o "$WORK/alias-requests.json.sig" "$WORK/alias-requests.json"
write_config alias "$repo" ', "embargoed_suites": ["bookworm-embargoed"]'
svc init --state "$WORK/alias-state" --config "$WORK/alias.json"
svc run --state "$WORK/alias-state" --once >/dev/null 2>&1
check "a request through the alias stable-embargoed is held, not published" \
    test "$(status_of "$WORK/alias-state" "$id1")" = held
check "... and nothing is in the output" test -z "$(ls -A "$WORK/alias-out")"
check "... though its Release verified and it was signed (held, not failed)" bash -c "
    '$REPROSIGN' service status --state '$WORK/alias-state' --json | grep -q '\"status\": *\"held\"'"

# ---- private state ----
mkdir -m 755 "$WORK/open-state"
write_config private "$repo"
check "init on an existing 0755 directory" svc init --state "$WORK/open-state" --config "$WORK/private.json"
check "... makes it 0700" test "$(stat -c %a "$WORK/open-state")" = 700
check "... and state.db 0600" test "$(stat -c %a "$WORK/open-state/state.db")" = 600
chmod 755 "$WORK/open-state"
refuses "run refuses a state directory others can read, naming it" "" \
    svc run --state "$WORK/open-state" --once
chmod 700 "$WORK/open-state"

# ---- freshness and the signer's key ----
run_expecting() {  # run_expecting TEXT COMMAND...: as COMMAND, but its error must name TEXT
    local text=$1 rc=0; shift
    "$@" 2>"$WORK/.expect" || rc=$?
    cat "$WORK/.expect" >&2
    grep -q "$text" "$WORK/.expect" || { echo "reprosign: the error does not name $text" >&2; return 2; }
    return "$rc"
}
old_gpg() {  # old_gpg HOME DAYS-AGO [EXPIRY]: a key made DAYS-AGO days ago
    mkdir -p -m 700 "$1"
    GNUPGHOME=$1 gpg --batch --quiet --passphrase '' --faked-system-time "$(date -u -d "-$2 days" +%Y%m%dT%H%M%S)" \
        --quick-gen-key 'old archive <old@example.org>' ed25519 sign "${3:-never}" 2>/dev/null
}
sign_at() {  # sign_at HOME DAYS-AGO FILE
    GNUPGHOME=$1 gpg --batch --quiet --yes --faked-system-time "$(date -u -d "-$2 days" +%Y%m%dT%H%M%S)" \
        --detach-sign -o "$3.sig" "$3" 2>/dev/null
}
fresh_state() {  # fresh_state NAME KEYRING [extra]: init a service whose requests verify with KEYRING
    write_config "$1" "$repo" "${3:-}"
    sed -i "s|\"requests_keyring\": \"[^\"]*\"|\"requests_keyring\": \"$2\"|" "$WORK/$1.json"
    svc init --state "$WORK/$1-state" --config "$WORK/$1.json"
}
old_gpg "$WORK/g-old" 60
GNUPGHOME=$WORK/g-old gpg --batch --export >"$WORK/old.gpg"
write_requests "$WORK/stale-requests.json"
sign_at "$WORK/g-old" 40 "$WORK/stale-requests.json"
fresh_state stale "$WORK/old.gpg"
refuses "an export signed 40 days ago is refused as a replay" "" svc run --state "$WORK/stale-state" --once
check "... and nothing was taken in" test "$(status_of "$WORK/stale-state" "$id1")" = none

old_gpg "$WORK/g-exp" 60 10d
GNUPGHOME=$WORK/g-exp gpg --batch --export >"$WORK/exp.gpg"
write_requests "$WORK/expired-requests.json"
sign_at "$WORK/g-exp" 55 "$WORK/expired-requests.json"
fresh_state expired "$WORK/exp.gpg" ', "max_age_days": 3650'
check "gpgv itself accepts a signature by a since-expired key (exit status 0)" \
    gpgv --keyring "$WORK/exp.gpg" "$WORK/expired-requests.json.sig" "$WORK/expired-requests.json"
refuses "the service refuses it (EXPKEYSIG)" "" run_expecting EXPKEYSIG svc run --state "$WORK/expired-state" --once

mkdir -p -m 700 "$WORK/g-rev"
GNUPGHOME=$WORK/g-rev gpg --batch --quiet --passphrase '' --quick-gen-key 'revoked <rev@example.org>' ed25519 sign never 2>/dev/null
write_requests "$WORK/revoked-requests.json"
GNUPGHOME=$WORK/g-rev gpg --batch --quiet --yes --detach-sign -o "$WORK/revoked-requests.json.sig" "$WORK/revoked-requests.json"
rev=$(ls "$WORK"/g-rev/openpgp-revocs.d/*.rev)
sed 's/^:-----BEGIN/-----BEGIN/' "$rev" | GNUPGHOME=$WORK/g-rev gpg --batch --quiet --import 2>/dev/null
GNUPGHOME=$WORK/g-rev gpg --batch --export >"$WORK/rev.gpg"
fresh_state revoked "$WORK/rev.gpg"
refuses "an export signed by a revoked key is refused (REVKEYSIG)" "" run_expecting REVKEYSIG svc run --state "$WORK/revoked-state" --once

# ---- a signature that is not there is named, not the file it signs ----
write_requests "$WORK/nosig-requests.json"
rm "$WORK/nosig-requests.json.sig"
fresh_state nosig "$WORK/archive.gpg"
refuses "an export without its signature is refused" "" \
    run_expecting "nosig-requests.json.sig: cannot open" svc run --state "$WORK/nosig-state" --once
cp -r "$repo" "$WORK/repo-nogpg" && rm "$WORK/repo-nogpg/dists/bookworm/Release.gpg"
write_config nogpg "$WORK/repo-nogpg"
svc init --state "$WORK/nogpg-state" --config "$WORK/nogpg.json"
rc=0; svc run --state "$WORK/nogpg-state" --once 2>"$WORK/nogpg.err" || rc=$?
check "an archive whose Release has no Release.gpg: its requests refused (exit status 3, got $rc)" test "$rc" -eq 3
check "... naming Release.gpg" grep -q "dists/bookworm/Release.gpg: cannot open" "$WORK/nogpg.err"
check "... and nothing published" test -z "$(ls -A "$WORK/nogpg-out")"

# ---- secrets stay out of children ----
mkdir -p "$WORK/bin"
cat >"$WORK/bin/dpkg-source" <<SH
#!/bin/sh
cat /proc/\$\$/environ | tr '\\0' '\\n' >>"$WORK/child-env"
exec /usr/bin/dpkg-source "\$@"
SH
chmod +x "$WORK/bin/dpkg-source"
write_config secret "$repo"
svc init --state "$WORK/secret-state" --config "$WORK/secret.json"
PATH=$WORK/bin:$PATH REPROSIGN_PKCS11_PIN=pin-4711-secret KBUILD_SIGN_PIN=pin-4712-secret \
    svc run --state "$WORK/secret-state" --once >/dev/null 2>&1
check "dpkg-source ran under the service" test -s "$WORK/child-env"
check "... and its environment holds no PIN" bash -c "! grep -q 'pin-471' '$WORK/child-env'"
check "... only what it needs" bash -c "! grep -qv -e '^PATH=' -e '^TMPDIR=' -e '^HOME=' -e '^SOURCE_DATE_EPOCH=' -e '^LC_ALL=' '$WORK/child-env'"

finish

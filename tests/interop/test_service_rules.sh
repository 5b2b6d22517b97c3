#!/bin/bash
# The signing service's archive-face rules (docs/security.md, "The archive"
# and "The machine") on a small archive this test makes itself, so that the
# network-free suite (ctest -LE 'network|vm', as the Debian package build
# runs it) catches a break of each: a template and its unsigned package
# built by dpkg-deb around a synthetic EFI image, indices written by hand.
# test_service_custody.sh reproduces the same attacks on Debian's own shim.
# - embargo by identity: an alias in dists/, a Release naming the suite;
# - embargo on every read: an alias repointed between a transient failure
#   and its retry is refused, and its twins (the same retry on one suite)
#   sign as a first pass would;
# - freshness: a Release past its Valid-Until or older than max_age_days,
#   and (with gpg) an export signed too long ago;
# - hashes down the tree: a .deb or an index that is not what the file
#   above it lists;
# - source binding, and the request's source;
# - declared trust: trusted_certs not on the allowlist;
# - private state, and children that see no secret;
# - (with gpg) signed inputs: a bad signature, an expired key.
. "$TESTS_DIR/lib.sh"
need_tool python3; need_tool dpkg-deb; need_tool dpkg-source
unset SOURCE_DATE_EPOCH
make_key db
svc() { "$REPROSIGN" service "$@"; }
status_of() {  # status_of STATE ID: its status, then whether it is embargoed
    "$REPROSIGN" service status --state "$1" --json | python3 -c "
import json, sys
d = json.load(sys.stdin)
print(' '.join('%s%s' % (r['status'], ' embargoed' if r['embargoed'] else '') for r in d['requests'] if r['id'] == '$2') or 'none')"
}
failure_of() {  # failure_of STATE ID: why it failed
    "$REPROSIGN" service status --state "$1" --json |
        python3 -c "import json, sys; print([r.get('reason', '') for r in json.load(sys.stdin)['requests'] if r['id'] == '$2'])"
}

# ---- the packages ----
python3 "$TESTS_DIR/tools/mkpe.py" "$WORK/hello.efi"
pkg() {  # pkg DIR PACKAGE SOURCE: a .deb of DIR's tree, in $WORK/pool
    mkdir -p "$1/DEBIAN"
    printf 'Package: %s\nSource: %s\nVersion: 1.0\nArchitecture: amd64\nMaintainer: t <t@example.org>\nDescription: t\n' \
        "$2" "$3" >"$1/DEBIAN/control"
    mkdir -p "$WORK/pool" && dpkg-deb --root-owner-group -b "$1" "$WORK/pool/${2}_1.0_amd64.deb" >/dev/null
}
mkdir -p "$WORK/u/usr/lib/hello" && cp "$WORK/hello.efi" "$WORK/u/usr/lib/hello/hello.efi"
pkg "$WORK/u" hello-unsigned hello
# template PACKAGE SOURCE [TRUSTED-CERT]: a signing template naming
# hello-unsigned, whose -signed source is PACKAGE without -template, as
# the service wants it named (test_service_pin.sh)
template() {
    local t=$WORK/t-$1 share=$WORK/t-$1/usr/share/code-signing/$1 certs=${3:+\"$3\"} signed=${1%-template}
    mkdir -p "$share/source-template/debian/source"
    printf '{"packages": {"hello-unsigned": {"trusted_certs": [%s], "files": [{"sig_type": "efi", "file": "usr/lib/hello/hello.efi"}]}}}\n' \
        "$certs" >"$share/files.json"
    printf '%s (1.0) unstable; urgency=medium\n\n  * Signed.\n\n -- t <t@example.org>  Sat, 04 Apr 2026 10:00:00 +0000\n' \
        "$signed" >"$share/source-template/debian/changelog"
    printf 'Source: %s\nMaintainer: t <t@example.org>\nBuild-Depends: hello-unsigned (= 1.0)\n\nPackage: %s\nArchitecture: amd64\nDescription: t\n' \
        "$signed" "$signed" >"$share/source-template/debian/control"
    printf '3.0 (native)\n' >"$share/source-template/debian/source/format"
    pkg "$t" "$1" "$2"
}
template hello-signed-template hello
template foo-signed-template foo
template test-signed-template hello "$(printf '%064d' 7)"

# ---- the archive: Packages and Release by hand, as apt reads them ----
index() {  # index REPO SUITE [DATE [VALID-UNTIL]]: dists/SUITE over every .deb in pool/
    local repo=$1 suite=$2 date=${3:-$(date -u -R)} d=$1/dists/$2 deb p
    mkdir -p "$d/main/binary-amd64"
    for deb in "$repo"/pool/*.deb; do
        dpkg-deb -f "$deb" Package Source Version Architecture
        p=${deb#"$repo"/}
        printf 'Filename: %s\nSize: %s\nSHA256: %s\n\n' "$p" "$(stat -c %s "$deb")" "$(sha256sum <"$deb" | cut -d' ' -f1)"
    done >"$d/main/binary-amd64/Packages"
    { printf 'Suite: %s\nCodename: %s\nDate: %s\n' "$suite" "$suite" "$date"
      [ -z "${4:-}" ] || printf 'Valid-Until: %s\n' "$4"
      printf 'Architectures: amd64\nComponents: main\nSHA256:\n %s %s main/binary-amd64/Packages\n' \
          "$(sha256sum <"$d/main/binary-amd64/Packages" | cut -d' ' -f1)" "$(stat -c %s "$d/main/binary-amd64/Packages")"
    } >"$d/Release"
}
repo=$WORK/repo
mkdir -p "$repo" && cp -r "$WORK/pool" "$repo/"
index "$repo" bookworm
index "$repo" bookworm-embargoed
ln -s bookworm-embargoed "$repo/dists/stable-embargoed"
# Each part of a suite's identity alone: a directory whose Release names
# other suites, reached through an alias; Releases whose Suite: or
# Codename: alone is embargoed.
index "$repo" hidden
sed -i 's/^Suite: hidden/Suite: hidden-suite/; s/^Codename: hidden/Codename: hidden-codename/' "$repo/dists/hidden/Release"
ln -s hidden "$repo/dists/alias-hidden"
index "$repo" quiet
sed -i 's/^Suite: quiet/Suite: bookworm-embargoed/' "$repo/dists/quiet/Release"
index "$repo" quiet2
sed -i 's/^Codename: quiet2/Codename: bookworm-embargoed/' "$repo/dists/quiet2/Release"
index "$repo" old "$(date -u -R -d '-40 days')"
index "$repo" expired "$(date -u -R)" "$(date -u -R -d '-1 day')"

# request ID PACKAGE SOURCE SUITE: one entry of requests.json
request() { printf '{"package": "%s", "source": "%s", "suite": "%s", "codename": "%s", "architecture": "amd64", "version": "1.0"}' "$2" "$3" "$4" "$4"; }
id() { echo "${1}_1.0_amd64"; }
# service NAME EXTRA-CONFIG REQUEST...: a state $WORK/NAME-state that has
# made one pass (none with NORUN=1)
service() {
    local name=$1 extra=$2 first=1 r; shift 2
    { echo '{"packages": ['; for r in "$@"; do [ $first = 1 ] || echo ,; first=0; echo "$r"; done; echo ']}'; } \
        >"$WORK/$name-requests.json"
    mkdir -p "$WORK/$name-out"
    cat >"$WORK/$name.json" <<JSON
{"archive": "${REPO:-$repo}", "requests": "$WORK/$name-requests.json", "allow_unsigned_archive": true,
 "keys": {"efi": {"key": "$WORK/db.key", "cert": "$WORK/db.crt"}}, "output": "$WORK/$name-out",
 "log": "$WORK/$name-log", "embargoed_suites": ["bookworm-embargoed", "hidden"]$extra}
JSON
    svc init --state "$WORK/$name-state" --config "$WORK/$name.json" >/dev/null || return
    [ -n "${NORUN:-}" ] || svc run --state "$WORK/$name-state" --once >"$WORK/$name.run" 2>&1
}

# ---- a request that breaks nothing is published ----
service good "" "$(request x hello-signed-template hello bookworm)"
hello=$(id hello-signed-template)
check "a template of the archive is signed and published" test "$(status_of "$WORK/good-state" "$hello")" = published
check "... its signature verifies on the unsigned image" bash -c "
    tar -xzf '$WORK/good-out/$hello/signatures.tar.gz' -C '$WORK' &&
    '$REPROSIGN' attach '$WORK/hello-unsigned/usr/lib/hello/hello.efi.sig' '$WORK/hello.efi' --output '$WORK/hello.signed' &&
    '$REPROSIGN' verify '$WORK/hello.signed' --cert '$WORK/db.crt'"

# ---- secrets stay in the process ----
mkdir -p "$WORK/bin"
cat >"$WORK/bin/dpkg-source" <<SH
#!/bin/sh
tr '\\0' '\\n' </proc/\$\$/environ >>"$WORK/child-env"
exec "$(command -v dpkg-source)" "\$@"
SH
chmod +x "$WORK/bin/dpkg-source"
PATH=$WORK/bin:$PATH REPROSIGN_PKCS11_PIN=pin-4711-secret KBUILD_SIGN_PIN=pin-4712-secret \
    service env "" "$(request x hello-signed-template hello bookworm)"
check "dpkg-source ran under the service" test -s "$WORK/child-env"
check "... and its environment holds no PIN" bash -c "! grep -q 'pin-471' '$WORK/child-env'"
check "... only what it needs" bash -c "! grep -qv -e '^PATH=' -e '^TMPDIR=' -e '^HOME=' -e '^SOURCE_DATE_EPOCH=' -e '^LC_ALL=' '$WORK/child-env'"

# ---- embargo by identity ----
service alias "" "$(request x hello-signed-template hello stable-embargoed)"
check "a request through the alias stable-embargoed is held" test "$(status_of "$WORK/alias-state" "$hello")" = "held embargoed"
check "... and nothing is published" test -z "$(ls -A "$WORK/alias-out")"
service hidden "" "$(request x hello-signed-template hello alias-hidden)"
check "a request through an alias of an embargoed directory whose Release names other suites is held" \
    test "$(status_of "$WORK/hidden-state" "$hello")" = "held embargoed"
service named "" "$(request x hello-signed-template hello quiet)"
check "a request for a suite whose Release's Suite: is embargoed is held" \
    test "$(status_of "$WORK/named-state" "$hello")" = "held embargoed"
service codename "" "$(request x hello-signed-template hello quiet2)"
check "a request for a suite whose Release's Codename: is embargoed is held" \
    test "$(status_of "$WORK/codename-state" "$hello")" = "held embargoed"
service direct "" "$(request x hello-signed-template hello bookworm-embargoed)"
check "a request for the embargoed suite itself is held" test "$(status_of "$WORK/direct-state" "$hello")" = "held embargoed"
service unknown "" "$(request x hello-signed-template hello nowhere)"
check "a request for a suite whose identity cannot be read is held (and fails)" \
    test "$(status_of "$WORK/unknown-state" "$hello")" = "failed embargoed"

# ---- embargo on every read: an alias swapped before a retry ----
# swapped NAME SUITE: a copy of the archive with the alias dists/moving ->
# SUITE, whose Packages is hidden, so that NAME's first pass over a request
# for moving fails for now.
swapped() {
    cp -r "$repo" "$WORK/repo-$1" && ln -s "$2" "$WORK/repo-$1/dists/moving"
    mv "$WORK/repo-$1/dists/$2/main/binary-amd64/Packages" "$WORK/repo-$1/Packages.away"
    REPO=$WORK/repo-$1 service "$1" "" "$(request x hello-signed-template hello moving)"
}
# retry_now NAME [SUITE]: its Packages back (in SUITE), the alias on SUITE, the retry due, a pass.
retry_now() {
    local dists=$WORK/repo-$1/dists suite=${2:-$(readlink "$WORK/repo-$1/dists/moving")}
    mv "$WORK/repo-$1/Packages.away" "$dists/$(readlink "$dists/moving")/main/binary-amd64/Packages"
    ln -sfn "$suite" "$dists/moving"
    python3 -c "
import sqlite3; db = sqlite3.connect('$WORK/$1-state/state.db')
db.execute(\"UPDATE requests SET retry_at = 1 WHERE failure = 'transient'\")
db.execute('UPDATE requests SET arrived = ?1', ($(arrived_of "$WORK/good-state"),)); db.commit()"
    svc run --state "$WORK/$1-state" --once >"$WORK/$1.retry" 2>&1
}
arrived_of() { python3 -c "import sqlite3; print(sqlite3.connect('$1/state.db').execute('SELECT arrived FROM requests').fetchone()[0])"; }
swapped swap bookworm
check "an alias on bookworm whose Packages is hidden: the first pass fails for now, not embargoed" \
    test "$(status_of "$WORK/swap-state" "$hello")" = failed
retry_now swap bookworm-embargoed
check "the alias repointed at bookworm-embargoed before the retry: the retry refuses it" \
    test "$(status_of "$WORK/swap-state" "$hello")" = failed
check "... and nothing is published" test -z "$(ls -A "$WORK/swap-out")"
check "... naming the suite as taken in and as read now" grep -q \
    "dists/moving is now bookworm-embargoed (Suite: bookworm-embargoed, Codename: bookworm-embargoed), not bookworm (Suite: bookworm, Codename: bookworm) as when it was taken in" \
    <(failure_of "$WORK/swap-state" "$hello")
check "... refused for good: no retry time" bash -c "'$REPROSIGN' service status --state '$WORK/swap-state' --json |
    python3 -c \"import json, sys; r = json.load(sys.stdin)['requests'][0]; assert r['failure'] == 'refused' and 'retry_at' not in r, r\""
# The twins: the same failure and retry with no swap.
swapped twin bookworm
retry_now twin
check "a retry after a transient failure on the same suite signs and publishes" \
    test "$(status_of "$WORK/twin-state" "$hello")" = published
check "... the very bytes of a first-pass signing at the same time" bash -c "
    cd '$WORK/good-out/$hello' && for f in *; do cmp \"\$f\" '$WORK/twin-out/$hello/'\"\$f\" || exit; done &&
    [ \"\$(ls '$WORK/twin-out/$hello')\" = \"\$(ls)\" ]"
# A request taken in by a service from before the identity was recorded:
# its state made old again (the columns dropped), the same swap is held,
# embargo decided from what the retry read.
swapped legacy bookworm
python3 -c "
import sqlite3; db = sqlite3.connect('$WORK/legacy-state/state.db')
for c in ('archive_dir', 'archive_suite', 'archive_codename'): db.execute('ALTER TABLE requests DROP COLUMN ' + c)
db.commit()"
retry_now legacy bookworm-embargoed
check "a request of an older state, its alias repointed at bookworm-embargoed before the retry, is held" \
    test "$(status_of "$WORK/legacy-state" "$hello")" = "held embargoed"
check "... and nothing is published" test -z "$(ls -A "$WORK/legacy-out")"
swapped twin-emb bookworm-embargoed
retry_now twin-emb
check "a retry after a transient failure on an embargoed suite signs and holds it" \
    test "$(status_of "$WORK/twin-emb-state" "$hello")" = "held embargoed"

# ---- freshness ----
service old "" "$(request x hello-signed-template hello old)"
check "a Release dated 40 days ago is refused (max_age_days 30)" test "$(status_of "$WORK/old-state" "$hello")" = "failed embargoed"
check "... naming its age" grep -q "its Date is more than 30 days old" <(failure_of "$WORK/old-state" "$hello")
service expired "" "$(request x hello-signed-template hello expired)"
check "a Release past its Valid-Until is refused" grep -q "its Valid-Until has passed" <(failure_of "$WORK/expired-state" "$hello")

# ---- hashes down the tree ----
bad=$WORK/repo-bad
cp -r "$repo" "$bad"
deb=$bad/pool/hello-unsigned_1.0_amd64.deb
python3 -c "import sys; p = sys.argv[1]; d = bytearray(open(p, 'rb').read()); d[-1] ^= 1; open(p, 'wb').write(d)" "$deb"
REPO=$bad service deb "" "$(request x hello-signed-template hello bookworm)"
check "a .deb that is not the one the Packages index lists is refused" test "$(status_of "$WORK/deb-state" "$hello")" = failed
check "... before it is read" grep -q "does not match the size and SHA-256 in the Packages index" <(failure_of "$WORK/deb-state" "$hello")
cp -r "$repo" "$WORK/repo-index"
# Same size, another byte: the hash alone tells.
sed -i 's/^Source: foo$/Source: fop/' "$WORK/repo-index/dists/bookworm/main/binary-amd64/Packages"
REPO=$WORK/repo-index service index "" "$(request x hello-signed-template hello bookworm)"
check "a Packages index that is not the one the Release lists is refused" \
    grep -q "does not match the size and SHA-256" <(failure_of "$WORK/index-state" "$hello")

# ---- source binding and declared trust ----
foo=$(id foo-signed-template)
service binding "" "$(request x foo-signed-template foo bookworm)" "$(request x hello-signed-template victim bookworm)"
check "a template of source foo naming hello's binaries is refused" test "$(status_of "$WORK/binding-state" "$foo")" = failed
check "... naming both sources" grep -q "built from source hello, not from the template's source foo" \
    <(failure_of "$WORK/binding-state" "$foo")
check "a request whose source is not the template's is refused" test "$(status_of "$WORK/binding-state" "$hello")" = failed
check "... naming both" grep -q "its Source: is hello, but the request is for source victim" \
    <(failure_of "$WORK/binding-state" "$hello")
service foreign ', "allowed_foreign_sources": {"foo": ["hello"]}' "$(request x foo-signed-template foo bookworm)"
check "allowed_foreign_sources lets foo's template name hello's binaries" \
    test "$(status_of "$WORK/foreign-state" "$foo")" = published
service trust "" "$(request x test-signed-template hello bookworm)"
check "a template whose trusted_certs are not on the allowlist is refused" \
    grep -q "is not on the allowlist" <(failure_of "$WORK/trust-state" "$(id test-signed-template)")
printf '%064d\n' 7 >"$WORK/allowlist"
service trusted ", \"trusted_certs_allowlist\": \"$WORK/allowlist\"" "$(request x test-signed-template hello bookworm)"
check "... and accepted once they are" test "$(status_of "$WORK/trusted-state" "$(id test-signed-template)")" = published

# ---- private state ----
mkdir -m 755 "$WORK/open-state"
check "init on an existing 0755 directory" svc init --state "$WORK/open-state" --config "$WORK/good.json"
check "... makes it 0700" test "$(stat -c %a "$WORK/open-state")" = 700
check "... and state.db 0600" test "$(stat -c %a "$WORK/open-state/state.db")" = 600
chmod 755 "$WORK/good-state"
refuses "run refuses a state directory others can read" "" svc run --state "$WORK/good-state" --once
check "... naming it" grep -q "good-state: mode 0755 lets other users read the service's state" "$WORK/.err"
chmod 750 "$WORK/good-state"
refuses "run refuses a state directory its group can read" "" svc run --state "$WORK/good-state" --once
chmod 700 "$WORK/good-state"
check "... and runs on it once it is private again" svc run --state "$WORK/good-state" --once

# ---- output and log: never shared, published on purpose ----
chmod 777 "$WORK/good-out"
refuses "run refuses an output directory others can write" "" svc run --state "$WORK/good-state" --once
check "... naming it" grep -q "output: .*good-out: mode 0777 lets other users replace what is written below it" "$WORK/.err"
chmod 755 "$WORK/good-out"
check "the log is published under the service's umask 077: checkpoint 0644, tile/ and leaf-index/ 0755" \
    test "$(stat -c %a "$WORK/good-log" "$WORK/good-log/checkpoint" "$WORK/good-log/tile" "$WORK/good-log/leaf-index" | tr '\n' ' ')" = "755 644 755 755 "

# ---- signed inputs and a replayed export (gpg) ----
if command -v gpg >/dev/null && command -v gpgv >/dev/null; then
    export GNUPGHOME=$WORK/gnupg
    gen() {  # gen HOME DAYS-AGO EXPIRY: a key made DAYS-AGO days ago, exported to HOME.gpg
        mkdir -p -m 700 "$1"
        GNUPGHOME=$1 gpg --batch --quiet --passphrase '' --faked-system-time "$(date -u -d "-$2 days" +%Y%m%dT%H%M%S)" \
            --quick-gen-key "archive $2 <a@example.org>" ed25519 sign "$3" 2>/dev/null
        GNUPGHOME=$1 gpg --batch --export >"$1.gpg"
    }
    signed() {  # signed NAME HOME DAYS-AGO: service NAME, its requests signed DAYS-AGO days ago with HOME's key
        local name=$1 home=$2 ago=$3
        NORUN=1 service "$name" ", \"requests_keyring\": \"$home.gpg\"" "$(request x hello-signed-template hello bookworm)"
        GNUPGHOME=$home gpg --batch --quiet --yes --faked-system-time "$(date -u -d "-$ago days" +%Y%m%dT%H%M%S)" \
            --detach-sign -o "$WORK/$name-requests.json.sig" "$WORK/$name-requests.json" 2>/dev/null
        [ -z "${TAMPER:-}" ] || echo ' ' >>"$WORK/$name-requests.json"
        svc run --state "$WORK/$name-state" --once >"$WORK/$name.run" 2>&1
    }
    gen "$WORK/g-now" 60 never
    gen "$WORK/g-exp" 60 10d
    signed fresh "$WORK/g-now" 0
    check "an export signed now is taken in" test "$(status_of "$WORK/fresh-state" "$hello")" = published
    signed stale "$WORK/g-now" 40 || true
    check "an export signed 40 days ago is refused as a replay" grep -q "signed more than 30 days ago" "$WORK/stale.run"
    check "... and nothing was taken in" test "$(status_of "$WORK/stale-state" "$hello")" = none
    TAMPER=1 signed tampered "$WORK/g-now" 0 || true
    check "an export changed after signing is refused" grep -q "does not verify" "$WORK/tampered.run"
    check "... and nothing was taken in" test "$(status_of "$WORK/tampered-state" "$hello")" = none
    signed expkey "$WORK/g-exp" 55 || true
    check "an export signed by a key that has since expired is refused (EXPKEYSIG)" grep -q EXPKEYSIG "$WORK/expkey.run"
else
    leave_out "no gpg and gpgv: signed inputs"
fi
finish

#!/bin/bash
# What the upload key uploads is pinned by the configuration, never by the
# template (issue #46, docs/security.md "The upload"), on a small archive
# this test makes itself around a synthetic EFI image:
# - a template of source shim whose changelog names linux-signed-amd64 (99)
#   is refused before anything is signed: nothing published, logged or
#   uploaded; listed in "signed_sources", it goes through;
# - a debian/control naming a binary package besides the -signed one;
# - a -signed version not newer than the last published (at signing, and
#   again at publishing, when two of one source meet in one pass);
# and the legitimate twin of each is published and uploaded as before.
. "$TESTS_DIR/lib.sh"
need_tool python3; need_tool dpkg-deb; need_tool dpkg-source; need_tool dpkg-genchanges; need_tool gpg; need_tool gpgv
unset SOURCE_DATE_EPOCH
make_key db
svc() { "$REPROSIGN" service "$@"; }
# The state's rows as "ID<TAB>STATUS<TAB>FAILURE<TAB>REASON" lines, read
# once after each pass (service status --json, through python once).
rows() {
    "$REPROSIGN" service status --state "$WORK/$1-state" --json | python3 -c "
import json, sys
for r in json.load(sys.stdin)['requests']:
    print('\t'.join([r['id'], r['status'], r.get('failure', ''), r.get('reason', '')]))" >"$WORK/$1.rows"
}
row() {  # row STATE ID FIELD: status, failure or reason of the request, from rows
    local field; case $3 in status) field=2 ;; failure) field=3 ;; reason) field=4 ;; esac
    awk -F'\t' -v id="$2" -v f="$field" '$1 == id { print $f }' "${1%-state}.rows"
}
says() {  # says STATE ID TEXT: the request failed, and its reason holds TEXT
    local r; r=$(row "$1" "$2" reason)
    grep -qF -- "$3" <<<"$r" || { echo "its reason: $r"; return 1; }
}
log_size() { python3 "$TESTS_DIR/interop/tlog_entries.py" "$1" 2>/dev/null | wc -l; }

upload_home=$WORK/upload-gnupg
mkdir -p -m 700 "$upload_home"
gpg --homedir "$upload_home" --batch --quiet --passphrase '' --quick-gen-key 'pin test <pin@example.org>' ed25519 sign never 2>/dev/null
upload_fpr=$(gpg --homedir "$upload_home" --with-colons --list-keys | awk -F: '/^fpr/ { print $10; exit }')
gpg --homedir "$upload_home" --batch --export "$upload_fpr" >"$WORK/upload.gpg"

# ---- the packages ----
python3 "$TESTS_DIR/tools/mkpe.py" "$WORK/shim.efi"
pkg() {  # pkg DIR PACKAGE SOURCE VERSION POOL: a .deb of DIR's tree
    mkdir -p "$1/DEBIAN" "$5"
    printf 'Package: %s\nSource: %s\nVersion: %s\nArchitecture: amd64\nMaintainer: t <t@example.org>\nDescription: t\n' \
        "$2" "$3" "$4" >"$1/DEBIAN/control"
    dpkg-deb --root-owner-group -Zgzip -z1 -b "$1" "$5/${2}_${4}_amd64.deb" >/dev/null
}
mkdir -p "$WORK/u/usr/lib/shim" && cp "$WORK/shim.efi" "$WORK/u/usr/lib/shim/shimx64.efi"
pkg "$WORK/u" shim-unsigned shim 1.0 "$WORK/unsigned"
tpl=shim-helpers-amd64-signed-template
# template POOL VERSION SIGNED-SOURCE SIGNED-VERSION [EXTRA-BINARY]: shim's
# template at VERSION, whose source-template says SIGNED-SOURCE (SIGNED-VERSION)
template() {
    local t=$WORK/t-$(basename "$1")-$2 share=$WORK/t-$(basename "$1")-$2/usr/share/code-signing/$tpl
    mkdir -p "$share/source-template/debian/source"
    printf '{"packages": {"shim-unsigned": {"trusted_certs": [], "files": [{"sig_type": "efi", "file": "usr/lib/shim/shimx64.efi"}]}}}\n' \
        >"$share/files.json"
    printf '%s (%s) unstable; urgency=medium\n\n  * Signed.\n\n -- t <t@example.org>  Sat, 04 Apr 2026 10:00:00 +0000\n' \
        "$3" "$4" >"$share/source-template/debian/changelog"
    { printf 'Source: %s\nMaintainer: t <t@example.org>\nBuild-Depends: shim-unsigned (= 1.0)\n\n' "$3"
      printf 'Package: %s\nArchitecture: amd64\nDescription: t\n' "$3"
      [ -z "${5:-}" ] || printf '\nPackage: %s\nArchitecture: amd64\nDescription: t\n' "$5"
    } >"$share/source-template/debian/control"
    printf '3.0 (native)\n' >"$share/source-template/debian/source/format"
    pkg "$t" "$tpl" shim "$2" "$1/pool"
}

# repo NAME: $WORK/NAME-repo, its dists/unstable over the pool's .debs
repo() {
    local r=$WORK/$1-repo d=$WORK/$1-repo/dists/unstable deb
    mkdir -p "$d/main/binary-amd64" && cp "$WORK/unsigned"/*.deb "$r/pool/"
    for deb in "$r"/pool/*.deb; do
        dpkg-deb -f "$deb" Package Source Version Architecture
        printf 'Filename: %s\nSize: %s\nSHA256: %s\n\n' "${deb#"$r"/}" "$(stat -c %s "$deb")" "$(sha256sum <"$deb" | cut -d' ' -f1)"
    done >"$d/main/binary-amd64/Packages"
    printf 'Suite: unstable\nCodename: sid\nDate: %s\nArchitectures: amd64\nComponents: main\nSHA256:\n %s %s main/binary-amd64/Packages\n' \
        "$(date -u -R)" "$(sha256sum <"$d/main/binary-amd64/Packages" | cut -d' ' -f1)" "$(stat -c %s "$d/main/binary-amd64/Packages")" \
        >"$d/Release"
}
request() { printf '{"package": "%s", "source": "shim", "suite": "unstable", "codename": "sid", "architecture": "amd64", "version": "%s"}' "$tpl" "$1"; }
id() { echo "${tpl}_${1}_amd64"; }
# service NAME EXTRA-CONFIG VERSION...: one pass of $WORK/NAME-state over
# requests for the template at each VERSION, uploading into NAME-incoming
service() {
    local name=$1 extra=$2 first=1 v; shift 2
    { echo '{"packages": ['; for v in "$@"; do [ $first = 1 ] || echo ,; first=0; request "$v"; done; echo ']}'; } \
        >"$WORK/$name-requests.json"
    mkdir -p "$WORK/$name-out" "$WORK/$name-incoming"
    cat >"$WORK/$name.json" <<JSON
{"archive": "$WORK/$name-repo", "requests": "$WORK/$name-requests.json", "allow_unsigned_archive": true,
 "keys": {"efi": {"key": "$WORK/db.key", "cert": "$WORK/db.crt"}}, "output": "$WORK/$name-out",
 "log": "$WORK/$name-log", "upload_key": "$upload_fpr", "gnupg_home": "$upload_home",
 "incoming": "$WORK/$name-incoming"$extra}
JSON
    [ -d "$WORK/$name-state" ] || svc init --state "$WORK/$name-state" --config "$WORK/$name.json" >/dev/null
    svc run --state "$WORK/$name-state" --once >"$WORK/$name.run" 2>&1
    local rc=$?
    rows "$name"
    return $rc
}
uploaded() {  # uploaded NAME STEM: incoming holds STEM.dsc, STEM.tar.xz, STEM_source.changes, signed by the upload key
    local in=$WORK/$1-incoming
    [ -f "$in/$2.dsc" ] && [ -f "$in/$2.tar.xz" ] && [ -f "$in/$2_source.changes" ] &&
        gpgv --keyring "$WORK/upload.gpg" "$in/$2.dsc" 2>/dev/null && gpgv --keyring "$WORK/upload.gpg" "$in/$2_source.changes" 2>/dev/null
}

# ---- the attack: a template of source shim names linux-signed-amd64 ----
template "$WORK/attack-repo" 1.0 linux-signed-amd64 99
# (and the next case's: its own -signed source, and a binary besides)
template "$WORK/attack-repo" 2.0 shim-helpers-amd64-signed 1+2.0 linux-image-amd64
repo attack
service attack "" 1.0 2.0 || true
check "a template of source shim whose changelog names linux-signed-amd64 (99) is refused" \
    test "$(row "$WORK/attack-state" "$(id 1.0)" status)" = failed
check "... naming the source, the template and the rule" says "$WORK/attack-state" "$(id 1.0)" "template $tpl (source shim): its source-template/debian/changelog names the -signed source linux-signed-amd64: refused, as Debian's naming gives only shim-helpers-amd64-signed, and \"signed_sources\".\"shim\".\"sources\" does not list it"
check "... as a refusal, not tried again" test "$(row "$WORK/attack-state" "$(id 1.0)" failure)" = refused
check "... recorded in the log of operations" grep -q "$(id 1.0): refused: template $tpl (source shim): .*linux-signed-amd64" "$WORK/attack.run"
check "... nothing reached incoming" test -z "$(ls -A "$WORK/attack-incoming")"
check "... nothing was published" test -z "$(ls -A "$WORK/attack-out")"
check "... nothing was signed into the transparency log" test "$(log_size "$WORK/attack-log")" = 0

# ---- a binary package besides the -signed one ----
check "a debian/control that also builds linux-image-amd64 is refused" \
    says "$WORK/attack-state" "$(id 2.0)" "builds the binary package linux-image-amd64: refused, as it is not the -signed source's own name shim-helpers-amd64-signed, and \"signed_sources\".\"shim\".\"binaries\" does not list it"
check "... as a refusal" test "$(row "$WORK/attack-state" "$(id 2.0)" failure)" = refused

# Listed in the configuration, the same template is the operator's choice.
template "$WORK/listed-repo" 1.0 linux-signed-amd64 99
repo listed
service listed ', "signed_sources": {"shim": {"sources": ["linux-signed-amd64"], "binaries": ["linux-signed-amd64"]}}' 1.0
check "listed in signed_sources, linux-signed-amd64 99 is published" test "$(row "$WORK/listed-state" "$(id 1.0)" status)" = published
check "... and uploaded" uploaded listed linux-signed-amd64_99

# ---- the -signed version must be newer ----
mkdir -p "$WORK/versions-repo/pool"
template "$WORK/versions-repo" 1.0 shim-helpers-amd64-signed 1+1.0
template "$WORK/versions-repo" 1.1 shim-helpers-amd64-signed 1+1.0
template "$WORK/versions-repo" 1.2 shim-helpers-amd64-signed 1+1.0~rc1
template "$WORK/versions-repo" 1.4 shim-helpers-amd64-signed 1+1.4
template "$WORK/versions-repo" 1.5 shim-helpers-amd64-signed 1+1.5
repo versions
service versions "" 1.0
# The legitimate twin of the first case: the template's own -signed source.
check "the legitimate twin (shim-helpers-amd64-signed 1+1.0) is published" test "$(row "$WORK/versions-state" "$(id 1.0)" status)" = published
check "... and uploaded, signed by the upload key" uploaded versions shim-helpers-amd64-signed_1+1.0
check "... the uploaded tarball is the published one, byte for byte" \
    cmp "$WORK/versions-incoming/shim-helpers-amd64-signed_1+1.0.tar.xz" "$WORK/versions-out/$(id 1.0)/shim-helpers-amd64-signed_1+1.0.tar.xz"
check "... the uploaded .dsc is the published one, clearsigned" bash -c "
    gpg --homedir '$upload_home' --batch --quiet --decrypt '$WORK/versions-incoming/shim-helpers-amd64-signed_1+1.0.dsc' 2>/dev/null |
        cmp - '$WORK/versions-out/$(id 1.0)/shim-helpers-amd64-signed_1+1.0.dsc'"
check "... its signature is in the transparency log" test "$(log_size "$WORK/versions-log")" = 1
service versions "" 1.1 1.2 || true
check "the same -signed version again is refused" says "$WORK/versions-state" "$(id 1.1)" "the -signed source shim-helpers-amd64-signed 1+1.0: refused, as its version is not newer in dpkg's order than 1+1.0, the last this service published for shim-helpers-amd64-signed in sid (request $(id 1.0))"
check "an older one (1+1.0~rc1, by dpkg's ~) is refused" says "$WORK/versions-state" "$(id 1.2)" "the -signed source shim-helpers-amd64-signed 1+1.0~rc1: refused, as its version is not newer"
check "... both as refusals" test "$(row "$WORK/versions-state" "$(id 1.1)" failure) $(row "$WORK/versions-state" "$(id 1.2)" failure)" = "refused refused"
check "... recorded in the log of operations" grep -q "$(id 1.2): refused: .*not newer" "$WORK/versions.run"
check "... nothing more reached incoming, or the transparency log" bash -c "
    [ \$(ls -A '$WORK/versions-incoming' | wc -l) = 3 ] && [ \$(python3 '$TESTS_DIR/interop/tlog_entries.py' '$WORK/versions-log' | wc -l) = 1 ]"
# Two in one pass, the newer first: both pass at signing; the newer one
# is published, and the older refused when it comes to be published.
service versions "" 1.5 1.4 || true
check "a newer one (1+1.5) is published and uploaded" uploaded versions shim-helpers-amd64-signed_1+1.5
check "of two in one pass, the older (1+1.4) is refused at publishing" says "$WORK/versions-state" "$(id 1.4)" "the -signed source shim-helpers-amd64-signed 1+1.4: refused, as its version is not newer in dpkg's order than 1+1.5"
check "... neither uploaded nor published nor logged" bash -c "
    ! ls '$WORK/versions-incoming' | grep -q '1+1.4' && [ ! -e '$WORK/versions-out/$(id 1.4)' ] &&
    [ \$(python3 '$TESTS_DIR/interop/tlog_entries.py' '$WORK/versions-log' | wc -l) = 2 ]"
check "... and staging is empty" test -z "$(ls -A "$WORK/versions-state/staging" 2>/dev/null)"
finish

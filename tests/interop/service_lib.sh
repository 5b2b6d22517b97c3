# Shared by the signing-service tests: a real local Debian repository
# (apt-ftparchive) holding Debian's shim-helpers-amd64-signed-template and
# shim-unsigned, a second template version for embargo tests, a
# requests.json signed with a throwaway OpenPGP key, and service configs.
# Source after lib.sh.
need_fixtures shim
need_tool apt-ftparchive; need_tool gpg; need_tool gpgv; need_tool dpkg-deb

debs=$FIXTURES/debs
template_deb=$(bash "$TESTS_DIR/tools/newest-deb.sh" "$debs" shim-helpers-amd64-signed-template)
unsigned_deb=$(bash "$TESTS_DIR/tools/newest-deb.sh" "$debs" shim-unsigned)
unsigned_root=$FIXTURES/root/shim-unsigned
tversion=$(dpkg-deb -f "$template_deb" Version)
sec_version=$tversion+sec1
id1=shim-helpers-amd64-signed-template_${tversion}_amd64
id2=shim-helpers-amd64-signed-template_${sec_version}_amd64
unset SOURCE_DATE_EPOCH
# The db key of a test that made one already signs here too.
[ -f "$WORK/db.key" ] || make_key db

# A second template version, as a security update would bring: same
# unsigned binaries (its debian/control pins them), new -signed version.
make_sec_template() {  # make_sec_template OUT.deb
    local t=$WORK/sec-template cl
    rm -rf "$t" && dpkg-deb -R "$template_deb" "$t"
    sed -i "s/^Version: .*/Version: $sec_version/" "$t/DEBIAN/control"
    cl=$(ls "$t"/usr/share/code-signing/*/source-template/debian/changelog)
    { printf 'shim-helpers-amd64-signed (1+%s) bookworm-security; urgency=medium\n\n  * Security update.\n\n' "$(echo "$sec_version" | sed 's/-/+/')"
      printf ' -- Debian signing service <ftpmaster@debian.org>  Sat, 04 Apr 2026 10:00:00 +0000\n\n'
      cat "$cl"; } >"$cl.new" && mv "$cl.new" "$cl"
    dpkg-deb -b "$t" "$1" >/dev/null
}

# make_repo DIR: pool/ with both templates and shim-unsigned, one suite.
make_repo() {
    local repo=$1
    mkdir -p "$repo/pool/main/s" "$repo/dists/bookworm/main/binary-amd64"
    cp "$template_deb" "$unsigned_deb" "$repo/pool/main/s/"
    [ -f "$WORK/sec.deb" ] || make_sec_template "$WORK/sec.deb"
    cp "$WORK/sec.deb" "$repo/pool/main/s/shim-helpers-amd64-signed-template_${sec_version}_amd64.deb"
    index_repo "$repo"
}

# index_repo DIR [SUITE [ARCH...]]: Packages for each architecture (its own
# and Architecture: all), a Release over them, signed. Default: bookworm, amd64.
index_repo() {
    local repo=$1 suite=${2:-bookworm} arch
    shift $(($# < 2 ? $# : 2))
    [ $# -gt 0 ] || set -- amd64
    for arch in "$@"; do
        mkdir -p "$repo/dists/$suite/main/binary-$arch"
        (cd "$repo" && apt-ftparchive --arch "$arch" packages pool >"dists/$suite/main/binary-$arch/Packages" 2>/dev/null) ||
            return 1
    done
    (cd "$repo" && apt-ftparchive -o APT::FTPArchive::Release::Suite="$suite" \
            -o APT::FTPArchive::Release::Codename="$suite" -o APT::FTPArchive::Release::Architectures="$*" \
            release "dists/$suite" >"$WORK/Release.tmp" && mv "$WORK/Release.tmp" "dists/$suite/Release" &&
        gpg --batch --quiet --yes --detach-sign -o "dists/$suite/Release.gpg" "dists/$suite/Release")
}

export GNUPGHOME=$WORK/gnupg
mkdir -p -m 700 "$GNUPGHOME"
gpg --batch --quiet --passphrase '' --quick-gen-key 'archive test <archive@example.org>' ed25519 sign never 2>/dev/null
gpg --batch --export >"$WORK/archive.gpg"

# write_requests FILE [EMBARGO-SECOND]: both template versions, signed.
write_requests() {
    local emb=${2:-false}
    cat >"$1" <<JSON
{"packages": [
 {"package": "shim-helpers-amd64-signed-template", "source": "shim", "suite": "bookworm", "codename": "bookworm", "architecture": "amd64", "version": "$tversion"},
 {"package": "shim-helpers-amd64-signed-template", "source": "shim", "suite": "bookworm", "codename": "bookworm", "architecture": "amd64", "version": "$sec_version", "embargoed": $emb}
]}
JSON
    rm -f "$1.sig"
    gpg --batch --quiet --detach-sign -o "$1.sig" "$1"
}

# write_config NAME REPO [extra JSON members]: $WORK/NAME.json, outputs in $WORK/NAME-out, log in $WORK/NAME-log.
write_config() {
    local name=$1 repo=$2 extra=${3:-}
    mkdir -p "$WORK/$name-out"
    [ -f "$WORK/$name-requests.json" ] || write_requests "$WORK/$name-requests.json"
    cat >"$WORK/$name.json" <<JSON
{
  "archive": "$repo",
  "requests": "$WORK/$name-requests.json",
  "requests_keyring": "$WORK/archive.gpg",
  "archive_keyring": "$WORK/archive.gpg",
  "keys": {"efi": {"key": "$WORK/db.key", "cert": "$WORK/db.crt"}},
  "output": "$WORK/$name-out",
  "log": "$WORK/$name-log"$extra
}
JSON
}

svc() { "$REPROSIGN" service "$@"; }
log_size() { if [ -f "$1/checkpoint" ]; then sed -n 2p "$1/checkpoint"; else echo 0; fi; }
status_of() {  # status_of STATE ID
    "$REPROSIGN" service status --state "$1" --json | python3 -c "
import json,sys
d=json.load(sys.stdin)
print(' '.join(r['status'] for r in d['requests'] if r['id']=='$2') or 'none')"
}

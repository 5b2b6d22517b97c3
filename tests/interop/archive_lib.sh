# The archive round trip, shared by test_archive_roundtrip*.sh: reprepro
# serves the real template and unsigned packages and takes the service's
# signed upload; the -signed source from its pool is built with the
# template's own rules, its build dependencies installed by apt from the
# same archive, and every signed file of the built package verified.
# Source after lib.sh. bookworm's packages ($FIXTURES/debs), built on this
# machine, unless the test sets before sourcing:
#   ROUNDTRIP_SUITE  the suite (its packages' own, such as trixie);
#   ROUNDTRIP_DEBS   where its packages are;
#   ROUNDTRIP_BUILDD a build chroot's tarball (fetch-fixtures.sh
#                    trixie-buildd), to build in as that suite's buildd does.
need_tool reprepro; need_tool gpg; need_tool gpgv; need_tool apt-get; need_tool dpkg-source
need_tool dpkg-genchanges; need_tool dpkg-buildpackage; need_tool dh; need_tool sbverify; need_tool python3
[ "$(id -u)" = 0 ] || skip "installing build dependencies with apt needs root"

suite=${ROUNDTRIP_SUITE:-bookworm}
debs=${ROUNDTRIP_DEBS:-$FIXTURES/debs}
unset SOURCE_DATE_EPOCH
make_key db
newest_deb() { bash "$TESTS_DIR/tools/newest-deb.sh" "$debs" "$1" amd64 all || true; }
template_deb() { newest_deb "$1"; }
unsigned_of() { bash "$TESTS_DIR/tools/template-packages.sh" "$(template_deb "$1")"; }
# served_with PKG: the packages at hand that PKG needs at its exact version
# (grub-efi-amd64-unsigned's grub-common), which the archive serves with it.
served_with() {
    local p
    for p in $(dpkg-deb -f "$(newest_deb "$1")" Depends | tr ',' '\n' | sed -n 's/^ *\([^ ]*\) *(= .*/\1/p'); do
        [ -n "$(newest_deb "$p")" ] && echo "$p"
    done
}
source_of() { local s; s=$(dpkg-deb -f "$1" Source | cut -d' ' -f1); echo "${s:-$(dpkg-deb -f "$1" Package)}"; }
fpr_of() { gpg --homedir "$1" --with-colons --list-keys | awk -F: '/^fpr/ { print $10; exit }'; }

# ---- keys: the archive's (Release, and requests.json), the service's
# upload key in a GnuPG home of its own, and an outsider's ----
export GNUPGHOME=$WORK/gnupg   # the archive side: reprepro signs and checks with it
upload_home=$WORK/upload-gnupg
other_home=$WORK/other-gnupg
for h in "$GNUPGHOME" "$upload_home" "$other_home"; do mkdir -p -m 700 "$h"; done
gpg --batch --quiet --passphrase '' --quick-gen-key 'archive test <archive@example.org>' ed25519 sign never 2>/dev/null
gpg --homedir "$upload_home" --batch --quiet --passphrase '' --quick-gen-key 'upload test <upload@example.org>' ed25519 sign never 2>/dev/null
gpg --homedir "$other_home" --batch --quiet --passphrase '' --quick-gen-key 'outsider <other@example.org>' ed25519 sign never 2>/dev/null
archive_fpr=$(fpr_of "$GNUPGHOME")
upload_fpr=$(fpr_of "$upload_home")
other_fpr=$(fpr_of "$other_home")
gpg --batch --export "$archive_fpr" >"$WORK/archive.gpg"
gpg --homedir "$upload_home" --batch --export "$upload_fpr" >"$WORK/upload.gpg"
gpg --homedir "$other_home" --batch --export "$other_fpr" >"$WORK/other.gpg"
# reprepro knows both public keys; its uploaders file trusts only one.
gpg --batch --quiet --import "$WORK/upload.gpg" "$WORK/other.gpg" 2>/dev/null

# ---- the archive ----
repo=$WORK/archive
mkdir -p "$repo/conf" "$repo/incoming" "$repo/tmp"
cat >"$repo/conf/distributions" <<EOF2
Origin: reprosign-test
Label: reprosign-test
Suite: $suite
Codename: $suite
Architectures: amd64 source
Components: main
UDebComponents: main
SignWith: $archive_fpr
Uploaders: uploaders
EOF2
# The long key id (16 hex digits) is as far as reprepro's uploaders go.
echo "allow * by key ${upload_fpr: -16}" >"$repo/conf/uploaders"
cat >"$repo/conf/incoming" <<EOF2
Name: incoming
IncomingDir: incoming
TempDir: tmp
Allow: $suite $suite-security>$suite unstable>$suite
Cleanup: on_deny on_error
EOF2
rr() { reprepro -b "$repo" --silent "$@"; }
rr export "$suite"

# ---- apt, configured privately: the machine's own setup is not touched ----
aptdir=$WORK/apt
mkdir -p "$aptdir/lists/partial" "$aptdir/cache/archives/partial" "$aptdir/sources.list.d" "$aptdir/preferences.d"
# The test archive, verified with its key; Debian's own archive for the
# ordinary dependencies of the build dependencies, the test archive pinned
# above it so every package it holds comes from it.
echo "deb [signed-by=$WORK/archive.gpg] file:$repo $suite main" >"$aptdir/sources.list"
[ -f /etc/apt/sources.list.d/debian.sources ] && cp /etc/apt/sources.list.d/debian.sources "$aptdir/sources.list.d/"
printf 'Package: *\nPin: release l=reprosign-test\nPin-Priority: 1001\n' >"$aptdir/preferences.d/test-archive"
apt_opts=(-o Dir::Etc::SourceList="$aptdir/sources.list" -o Dir::Etc::SourceParts="$aptdir/sources.list.d"
    -o Dir::Etc::PreferencesParts="$aptdir/preferences.d" -o Dir::Etc::Preferences=/dev/null
    -o Dir::State::Lists="$aptdir/lists" -o Dir::Cache="$aptdir/cache" -o APT::Sandbox::User=root
    -o DPkg::Lock::Timeout=600)   # other tests (dpkg -i) may hold dpkg's lock for a while
# A command, so that checks run through bash -c can use it too.
{ printf '#!/bin/sh\nexport DEBIAN_FRONTEND=noninteractive\nexec apt-get -q'
  printf " '%s'" "${apt_opts[@]}"; printf ' "$@"\n'; } >"$WORK/private-apt"
chmod +x "$WORK/private-apt"
private_apt() { "$WORK/private-apt" "$@"; }

# ---- where the -signed package is built: this machine, or a chroot of
# the suite as its buildd has (ROUNDTRIP_BUILDD), its apt set up the same
# way: the test archive pinned above Debian's. $WORK/in-buildd SCRIPT runs
# SCRIPT there with bash, this test's work directory at the same path.
if [ -n "${ROUNDTRIP_BUILDD:-}" ]; then
    . "$TESTS_DIR/interop/buildd_lib.sh"
    buildd_setup "$ROUNDTRIP_BUILDD"
    where=" in $suite's build chroot" build_apt=apt-get
    echo "deb [signed-by=$WORK/archive.gpg] file:$repo $suite main" >"$buildd/etc/apt/sources.list.d/test-archive.list"
    cp "$aptdir/preferences.d/test-archive" "$buildd/etc/apt/preferences.d/"
else
    where=' on this machine' build_apt=$WORK/private-apt
    printf '#!/bin/sh\nexec bash -c "$1"\n' >"$WORK/in-buildd"
    chmod +x "$WORK/in-buildd"
fi
export build_apt

# ---- the service, uploading into the archive's incoming ----
write_service_config() {  # write_service_config TEMPLATE
    local t=$1 deb
    deb=$(template_deb "$t")
    cat >"$WORK/requests.json" <<EOF2
{"packages": [{"package": "$t", "source": "$(source_of "$deb")", "suite": "$suite", "codename": "$suite",
  "architecture": "amd64", "version": "$(dpkg-deb -f "$deb" Version)"}]}
EOF2
    rm -f "$WORK/requests.json.sig"
    gpg --batch --quiet --detach-sign -o "$WORK/requests.json.sig" "$WORK/requests.json"
    mkdir -p "$WORK/out"
    cat >"$WORK/service.json" <<EOF2
{
  "archive": "$repo",
  "archive_keyring": "$WORK/archive.gpg",
  "requests": "$WORK/requests.json",
  "requests_keyring": "$WORK/archive.gpg",
  "keys": {"efi": {"key": "$WORK/db.key", "cert": "$WORK/db.crt"}},
  "output": "$WORK/out",
  "log": "$WORK/log",
  "upload_key": "$upload_fpr",
  "gnupg_home": "$upload_home",
  "incoming": "$repo/incoming"
}
EOF2
}

# The clearsigned file's text, as its signer signed it.
unsign() { gpg --batch --quiet --decrypt "$1" 2>/dev/null; }
resign_with_other() {  # resign_with_other FILE
    unsign "$1" >"$1.plain" && gpg --homedir "$other_home" --batch --quiet --yes --clearsign -o "$1" "$1.plain" && rm "$1.plain"
}

# roundtrip TEMPLATE: the whole flow for one template.
roundtrip() {
    local t=$1 deb src signed_src up dsc changes
    deb=$(template_deb "$t")
    check "$t: reprepro includedeb the template and its unsigned packages" bash -c "
        reprepro -b '$repo' --silent includedeb '$suite' '$deb' $(for p in $(unsigned_of "$t"); do
            for q in "$p" $(served_with "$p"); do printf "'%s' " "$(newest_deb "$q")"; done; done)"
    write_service_config "$t"
    check "$t: service init" "$REPROSIGN" service init --state "$WORK/state" --config "$WORK/service.json"
    check "$t: service run --once signs, publishes and uploads" "$REPROSIGN" service run --state "$WORK/state" --once
    up=$repo/incoming
    changes=$(ls "$up"/*_source.changes 2>/dev/null | head -n 1)
    dsc=$(ls "$up"/*.dsc 2>/dev/null | head -n 1)
    check "$t: the upload holds a .dsc, a .tar.xz and a _source.changes, no temporary files" bash -c "
        cd '$up' && [ \$(ls -A | wc -l) = 3 ] && ls *.dsc *.tar.xz *_source.changes >/dev/null"
    check "$t: the .changes is source-only" grep -qx 'Architecture: source' "$changes"
    check "$t: the .changes is clearsigned by the upload key" bash -c "
        gpgv --keyring '$WORK/upload.gpg' '$changes' 2>&1 | grep -q 'Good signature' && head -1 '$changes' | grep -q 'BEGIN PGP SIGNED MESSAGE'"
    check "$t: so is the .dsc" bash -c "gpgv --keyring '$WORK/upload.gpg' '$dsc' 2>&1 | grep -q 'Good signature'"
    mkdir -p "$WORK/upload-copy" && cp "$up"/* "$WORK/upload-copy/"
    signed_src=$(sed -n 's/^Source: //p' "$WORK/upload-copy/$(basename "$changes")" | head -n 1)

    # An upload signed by a key reprepro knows but its uploaders file does not allow.
    resign_with_other "$changes" && resign_with_other "$dsc"
    check "$t: reprepro processincoming rejects an upload signed by another key" bash -c "
        ! reprepro -b '$repo' processincoming incoming >'$WORK/reject-key.log' 2>&1"
    # The same files, signed by the upload key, are accepted below: the key is all that differs.
    check "$t: ... as no distribution accepts it (uploaders)" grep -q "No distribution accepting" "$WORK/reject-key.log"
    check "$t: ... and takes nothing from it" bash -c "! reprepro -b '$repo' list '$suite' '$signed_src' | grep -q source"
    # The right signature on the .changes, a .dsc changed after signing.
    rm -f "$up"/* && cp "$WORK/upload-copy"/* "$up/"
    sed -i 's/^Standards-Version: .*/&1/; s/^Maintainer: /Maintainer: x/' "$dsc"
    check "$t: reprepro processincoming rejects a tampered .dsc" bash -c "
        ! reprepro -b '$repo' processincoming incoming >'$WORK/reject-dsc.log' 2>&1"
    check "$t: ... because it no longer matches the checksums the .changes lists" \
        grep -q "File '.*\.dsc' does not match expectations" "$WORK/reject-dsc.log"
    check "$t: ... and takes nothing from it" bash -c "! reprepro -b '$repo' list '$suite' '$signed_src' | grep -q source"
    rm -f "$up"/* && cp "$WORK/upload-copy"/* "$up/"
    check "$t: reprepro processincoming accepts the service's upload" rr processincoming incoming
    check "$t: the -signed source is in the archive" bash -c "reprepro -b '$repo' list '$suite' '$signed_src' | grep -q 'source'"

    # ---- the buildd's side ----
    local pooldsc build=$WORK/build-$t
    pooldsc=$(find "$repo/pool" -name "${signed_src}_*.dsc" | head -n 1)
    mkdir -p "$build"
    check "$t: dpkg-source -x the -signed source from the pool" bash -c "cd '$build' && dpkg-source -x '$pooldsc' tree >/dev/null 2>&1"
    check "$t: apt updates from the test archive$where, its Release verified with the archive key" \
        bash -c "'$WORK/in-buildd' \"\$build_apt update\" >'$WORK/apt-update.log' 2>&1 &&
            ! grep -q -e '^W:' -e '^E:' '$WORK/apt-update.log' && grep -q '^Get:.* file:$repo $suite InRelease' '$WORK/apt-update.log' ||
            { cat '$WORK/apt-update.log'; exit 1; }"
    check "$t: apt installs the build dependencies from the test archive$where" \
        bash -c "'$WORK/in-buildd' \"cd '$build/tree' && \$build_apt build-dep -y --no-install-recommends ./\" \
            >'$WORK/build-dep-$t.log' 2>&1 || { tail -5 '$WORK/build-dep-$t.log'; exit 1; }"
    for p in $(unsigned_of "$t"); do
        check "$t: $p is installed$where, the version the archive serves" test \
            "$("$WORK/in-buildd" "dpkg-query -W -f '\${Version}' '$p'" 2>&1)" = "$(dpkg-deb -f "$(newest_deb "$p")" Version)"
    done
    check "$t: dpkg-buildpackage -b$where runs the template's own debian/rules" bash -c "
        '$WORK/in-buildd' \"cd '$build/tree' && dpkg-buildpackage -us -uc -b\" >'$WORK/build-$t.log' 2>&1 ||
            { tail -20 '$WORK/build-$t.log'; exit 1; }"
    local built_changes
    built_changes=$(ls "$build"/*_amd64.changes | head -n 1)
    check "$t: it was built$where: its .buildinfo names that dpkg" grep -qx " dpkg (= $("$WORK/in-buildd" \
        "dpkg-query -W -f '\${Version}' dpkg")),\?" "$(ls "$build"/*_amd64.buildinfo | head -n 1)"
    # A buildd's upload is its own affair (a buildd key), not the service's: the uploaders rule is for the latter.
    check "$t: reprepro include takes the built .changes" \
        rr --ignore=wrongdistribution --ignore=uploaders include "$suite" "$built_changes"

    # ---- the user's side: every signed file verifies ----
    local bins nfiles=0 bad=0
    bins=$(sed -n 's/^Binary: //p' "$built_changes")
    private_apt update >/dev/null 2>&1
    mkdir -p "$WORK/dl-$t" "$WORK/signed-$t"
    for b in $bins; do
        dpkg-deb -f "$(ls "$build/${b}_"*.deb 2>/dev/null | head -n 1)" Package >/dev/null 2>&1 || continue   # a udeb
        check "$t: apt-get download $b from the archive" bash -c "
            cd '$WORK/dl-$t' && '$WORK/private-apt' download '$b' >/dev/null 2>&1"
        check "$t: ... and it is the package built here" cmp "$(ls "$WORK/dl-$t/${b}_"*.deb)" "$(ls "$build/${b}_"*.deb)"
    done
    for d in "$WORK/dl-$t"/*.deb; do dpkg-deb -x "$d" "$WORK/signed-$t"; done
    # Each file the template lists, as the built packages install it: under
    # its own name (bookworm's and trixie's kernel images), as NAME.signed
    # in a directory of its own (shim's, GRUB's), or, for NAME.unsigned, as
    # NAME in the same directory (forky's kernel images, each vmlinuz in its
    # flavour's /usr/lib/modules/VERSION). Modules the kernel's build
    # signed itself are not the template's and are not looked at.
    local want=0 base
    while read -r listed; do
        want=$((want + 1))
        base=$(basename "$listed")
        if [ "${base%.unsigned}" != "$base" ]; then
            f=$(find "$WORK/signed-$t" -type f -path "*/$(dirname "$listed")/${base%.unsigned}" | head -n 1)
        else
            f=$(find "$WORK/signed-$t" -type f \( -name "$base" -o -name "$base.signed" \) | head -n 1)
        fi
        if [ -z "$f" ]; then echo "not in the built packages: $listed"; bad=$((bad + 1)); continue; fi
        nfiles=$((nfiles + 1))
        case $f in
        *.ko)
            "$REPROSIGN" verify --cert "$WORK/db.crt" "$f" >/dev/null 2>&1 &&
                [ "$(modinfo -F signer "$f")" = "reprosign test db" ] || { echo "module does not verify: $f"; bad=$((bad + 1)); } ;;
        *)
            sbverify --cert "$WORK/db.crt" "$f" >/dev/null 2>&1 && "$REPROSIGN" verify --cert "$WORK/db.crt" "$f" >/dev/null 2>&1 ||
                { echo "does not verify: $f"; bad=$((bad + 1)); } ;;
        esac
    done < <(tar -tzf "$WORK"/out/*/signatures.tar.gz | sed -n 's|^[^/]*/\(.*\)\.sig$|\1|p')
    check "$t: the downloaded packages hold every file the template lists ($nfiles of $want), each verifying with the test CA" \
        test "$nfiles" = "$want" -a "$want" -gt 0 -a "$bad" = 0
}

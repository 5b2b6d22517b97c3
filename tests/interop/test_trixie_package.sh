#!/bin/bash
# reprosign on trixie, Debian's stable release: its Debian package built
# from a copy of the source in a trixie build chroot (trixie's compiler,
# OpenSSL, libarchive, GPGME, systemd; the build runs the network-free
# tests), installed there by apt from trixie's archive, and the installed
# binary's signature accepted by trixie's sbverify, osslsigncode and pesign.
# Slow: runs only with REPROSIGN_TEST_PACKAGE=1 (scripts/test.sh sets it).
. "$TESTS_DIR/lib.sh"
# An opt-in, not a missing dependency, so never a failure.
[ "${REPROSIGN_TEST_PACKAGE:-0}" = 1 ] || { echo "SKIP: set REPROSIGN_TEST_PACKAGE=1 to build the package"; exit 77; }
[ "$(id -u)" = 0 ] || skip "a build chroot needs root"
need_tool git
need_fixtures trixie-buildd
. "$TESTS_DIR/interop/buildd_lib.sh"
buildd_setup "$FIXTURES/trixie/buildd-amd64.tar"
pkg=$WORK/pkg/reprosign
copy_source "$pkg"

check "trixie: apt installs reprosign's build dependencies" bash -c "
    '$WORK/in-buildd' \"apt-get update && cd '$pkg' && apt-get build-dep --no-install-recommends ./\" >'$WORK/deps.log' 2>&1 ||
        { tail -n 20 '$WORK/deps.log'; exit 1; }"
check "trixie: dpkg-buildpackage -b builds reprosign and its tests pass" bash -c "
    '$WORK/in-buildd' \"cd '$pkg' && DEB_BUILD_OPTIONS=parallel=$(nproc) dpkg-buildpackage -us -uc -b\" >'$WORK/build.log' 2>&1 ||
        { tail -n 40 '$WORK/build.log'; exit 1; }"
check "trixie: ... with no compiler warning" bash -c "! grep -E '(warning|error): ' '$WORK/build.log'"
check "trixie: ... and every test the build ran passed" grep -q '^100% tests passed' "$WORK/build.log"
deb=$(ls "$WORK"/pkg/reprosign_*_amd64.deb 2>/dev/null | head -n 1)
check "trixie: apt installs the built package, its dependencies resolved in trixie" bash -c "
    '$WORK/in-buildd' \"apt-get install --no-install-recommends '$deb' sbsigntool osslsigncode pesign\" >'$WORK/install.log' 2>&1 ||
        { tail -n 20 '$WORK/install.log'; exit 1; }"
check "trixie: the installed reprosign signs an EFI image that sbverify, osslsigncode and pesign accept" \
    "$WORK/in-buildd" "set -e; cd '$WORK'
        openssl req -new -x509 -newkey rsa:2048 -nodes -sha256 -days 30 -subj '/CN=reprosign trixie test' \
            -keyout db.key -out db.crt 2>/dev/null
        python3 '$pkg/tests/tools/mkpe.py' a.efi
        /usr/bin/reprosign sign --key db.key --cert db.crt a.efi --output a.signed
        sbverify --cert db.crt a.signed
        osslsigncode verify -CAfile db.crt -in a.signed
        pesign -S -i a.signed | grep -q 'common name is reprosign trixie test'
        /usr/bin/reprosign verify --cert db.crt a.signed"
finish

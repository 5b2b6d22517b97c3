#!/bin/bash
# Builds the Debian package from a copy of the source (dpkg-buildpackage
# -us -uc -b, which runs the network-free tests), checks what it installs,
# and runs lintian on it. Slow: runs only with REPROSIGN_TEST_PACKAGE=1
# (scripts/test.sh sets it).
. "$TESTS_DIR/lib.sh"
# An opt-in, not a missing dependency, so never a failure.
[ "${REPROSIGN_TEST_PACKAGE:-0}" = 1 ] || { echo "SKIP: set REPROSIGN_TEST_PACKAGE=1 to build the package"; exit 77; }
need_tool dpkg-buildpackage; need_tool dh; need_tool git

copy_source "$WORK/pkg/reprosign"
# The package's own tests follow its Build-Depends: there, a missing tool
# skips (no REPROSIGN_REQUIRE_ALL).
check "dpkg-buildpackage -us -uc -b builds the package (and runs its tests)" bash -c "
    cd '$WORK/pkg/reprosign' && env -u REPROSIGN_TEST_PACKAGE -u REPROSIGN_REQUIRE_ALL DEB_BUILD_OPTIONS=parallel=\$(nproc) dpkg-buildpackage -us -uc -b >'$WORK/build.log' 2>&1 ||
    { tail -n 40 '$WORK/build.log'; exit 1; }"
deb=$(ls "$WORK"/pkg/reprosign_*.deb 2>/dev/null | head -n 1)
check "a reprosign .deb" test -n "$deb"
dpkg-deb -c "$deb" >"$WORK/contents" 2>/dev/null
check "... installs /usr/bin/reprosign" grep -q ' \./usr/bin/reprosign$' "$WORK/contents"
check "... the man pages" bash -c "grep -q 'usr/share/man/man1/reprosign.1.gz' '$WORK/contents' &&
    grep -q 'usr/share/man/man1/reprosign-sign-template.1.gz' '$WORK/contents'"
check "... reprosign-service.json(5)" grep -q 'usr/share/man/man5/reprosign-service.json.5.gz' "$WORK/contents"
check "... reprosign-log(5)" grep -q 'usr/share/man/man5/reprosign-log.5.gz' "$WORK/contents"
check "... and docs/json.md's JSON Schemas beside it" bash -c "grep -q 'usr/share/doc/reprosign/json.md' '$WORK/contents' &&
    grep -q 'usr/share/doc/reprosign/schemas/efi-list.json\$' '$WORK/contents'"
check "... the bash completion" grep -q 'usr/share/bash-completion/completions/reprosign$' "$WORK/contents"
check "... the zsh completion" grep -q 'usr/share/zsh/vendor-completions/_reprosign$' "$WORK/contents"
check "... and depends on libarchive13 (loaded with dlopen)" bash -c "dpkg-deb -f '$deb' Depends | grep -q libarchive13"
check "... and on libp11-kit0 (loaded with dlopen too)" bash -c "dpkg-deb -f '$deb' Depends | grep -q libp11-kit0"
check "... the systemd units, sysusers and tmpfiles" bash -c "
    grep -q 'lib/systemd/system/reprosign.service$' '$WORK/contents' &&
    grep -q 'lib/systemd/system/reprosign.socket$' '$WORK/contents' &&
    grep -q 'usr/lib/sysusers.d/reprosign.conf$' '$WORK/contents' &&
    grep -q 'usr/lib/tmpfiles.d/reprosign.conf$' '$WORK/contents'"
check "... and a default /etc/reprosign/service.json, a conffile" bash -c "
    grep -q 'etc/reprosign/service.json$' '$WORK/contents' && dpkg-deb -I '$deb' conffiles | grep -qx /etc/reprosign/service.json"
mkdir -p "$WORK/conf" && dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$WORK/conf" ./etc/reprosign/service.json
# Its paths moved under WORK, so init makes its directories here.
mkdir -p "$WORK/srv"
sed "s|/srv/reprosign|$WORK/srv|g" "$WORK/conf/etc/reprosign/service.json" >"$WORK/default.json"
check "... which 'service init' accepts as it ships, comments and all" \
    "$REPROSIGN" service init --state "$WORK/default-state" --config "$WORK/default.json"
if [ "$(id -u)" = 0 ] && [ "${REPROSIGN_INSTALL_PACKAGE:-0}" = 1 ]; then
    check "dpkg -i installs it" bash -c "dpkg -i '$deb' >'$WORK/dpkg.log' 2>&1 || { tail -20 '$WORK/dpkg.log'; exit 1; }"
    check "... and creates the reprosign user and the reprosign-sign group" bash -c "getent passwd reprosign && getent group reprosign-sign"
    check "systemd-analyze verify passes on the installed units" \
        systemd-analyze verify --man=no /lib/systemd/system/reprosign.socket /lib/systemd/system/reprosign.service
fi
if command -v lintian >/dev/null; then
    lintian --fail-on error "$WORK"/pkg/reprosign_*.changes >"$WORK/lintian.log" 2>&1
    rc=$?
    sed 's/^/    lintian: /' "$WORK/lintian.log"
    check "lintian reports no errors" test "$rc" -eq 0
else
    echo "note: lintian is not installed"
fi
finish

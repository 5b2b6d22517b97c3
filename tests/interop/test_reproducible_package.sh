#!/bin/bash
# reprosign's own Debian package builds reproducibly, as Debian's
# reproducible-builds checks expect of every package: reprotest builds it
# twice, the second time varied in every way it can vary here (as root, the
# build user too), and both builds' .debs must be the same bytes. Slow (two
# package builds): runs only with REPROSIGN_TEST_PACKAGE=1, as
# test_debian_package does.
. "$TESTS_DIR/lib.sh"
# An opt-in, not a missing dependency, so never a failure.
[ "${REPROSIGN_TEST_PACKAGE:-0}" = 1 ] || { echo "SKIP: set REPROSIGN_TEST_PACKAGE=1 to build the package"; exit 77; }
need_tool reprotest; need_tool dpkg-buildpackage; need_tool dh; need_tool git
need_tool faketime; need_tool disorderfs; need_tool diffoscope

copy_source "$WORK/src"
# As root, the second build runs as another user and group: nobody, the one
# unprivileged account every Debian system has. Three things of bookworm's
# stand in the way, each met here without touching the system:
#   - its reprotest (0.7.23) prefixes every sudo with "-h localhost", which
#     its sudo refuses ("a remote host may only be specified when listing
#     privileges"): the sudo first on reprotest's PATH drops that prefix and
#     runs the real one;
#   - disorderfs then mounts as nobody, and on machines where /dev/fuse is
#     root's alone (0600; udev's default is 0666) that fails: reprotest runs
#     in a mount namespace of its own where /dev/fuse is a 0666 node;
#   - both builds write beside their trees, in one directory, so the
#     second, as nobody, cannot replace the first's root-owned .buildinfo:
#     each build starts by removing them (reprotest already removes the
#     .debs).
varied='environment build_path kernel aslr num_cpus time fileordering user_group domain_host home locales exec_path timezone umask'
mkdir -p "$WORK/bin"
if [ "$(id -u)" = 0 ]; then
    need_tool sudo; need_tool unshare
    cat >"$WORK/bin/sudo" <<'SH'
#!/bin/sh
[ "$1" = -h ] && [ "$2" = localhost ] && shift 2
exec /usr/bin/sudo "$@"
SH
    chmod +x "$WORK/bin/sudo"
    vary='user_group.available+=nobody:nogroup,domain_host.use_sudo=1'
    in_namespace=(unshare -m --propagation private sh -ec '
        mkdir -p "$0/dev" && mount -t tmpfs -o mode=755 tmpfs "$0/dev"
        mknod -m 666 "$0/dev/fuse" c 10 229 && mount --bind "$0/dev/fuse" /dev/fuse
        exec "$@"' "$WORK")
else
    # Both need root: sudo to another user, and a UTS namespace.
    vary='-user_group,-domain_host'
    varied=${varied/ user_group/}
    varied=${varied/ domain_host/}
    in_namespace=()
    echo "note: not root, so the build user and group, and the host and domain name, are not varied"
fi
# The package's tests run in test_debian_package; here only the bytes count.
check "reprotest: the package built twice, the second build varied, gives the same .debs" bash -c "
    cd '$WORK' && PATH='$WORK/bin':\$PATH DEB_BUILD_OPTIONS='nocheck parallel=$(nproc)' \
        ${in_namespace[*]@Q} reprotest --verbose --verbose \\
        --testbed-build-pre 'rm -f ../*.buildinfo ../*.changes' --vary='$vary' \
        --store-dir='$WORK/out' src -- null >'$WORK/reprotest.log' 2>&1 ||
    { grep -E '^(INFO|WARNING|ERROR)|differences|Reproduc|failed|denied' '$WORK/reprotest.log' | tail -n 30
      head -n 80 '$WORK'/out/*.diffoscope.out 2>/dev/null; exit 1; }"
experiment=$(grep -m 1 '^INFO:reprotest:build "experiment-1":' "$WORK/reprotest.log")
missing=
for v in $varied; do [[ $experiment == *"vary $v"* ]] || missing="$missing $v"; done
[ -z "$missing" ] || echo "    not varied:$missing (reprotest: ${experiment#*: })"
check "... which varied all $(echo "$varied" | wc -w) of: $varied" test -n "$experiment" -a -z "$missing"
check "... among them the file order, through disorderfs" grep -q '^INFO:reprotest.build:DISORDERFS variation' "$WORK/reprotest.log"
if [ "$(id -u)" = 0 ]; then
    # reprotest's debug log shows the script it ran for each build.
    check "... the second as nobody:nogroup, the first as root" bash -c "
        awk '/^INFO:reprotest:build \"experiment-1\"/ {e = 1} e && /sudo .*-u nobody -g nogroup env/ {n++} END {exit !n}' '$WORK/reprotest.log' &&
        awk '/^INFO:reprotest:build \"experiment-1\"/ {exit} /-u nobody/ {n++} END {exit n}' '$WORK/reprotest.log'"
fi
check "... and both builds made reprosign_*.deb and its -dbgsym" bash -c "
    for build in control experiment-1; do
        ls '$WORK'/out/\$build/reprosign_*_$(dpkg --print-architecture).deb '$WORK'/out/\$build/reprosign-dbgsym_*.deb || exit 1
    done"
finish

# A build chroot, as a release's buildds build in, from a tarball that
# tests/fetch-fixtures.sh made (trixie-buildd). Source after lib.sh.
#   buildd_setup TARBALL [NAME]: unpacks it into $WORK/NAME (default
#     buildd), its apt run as root (the work directory is private to root)
#     and answering yes, and writes $WORK/in-NAME.
#   $WORK/in-NAME SCRIPT: runs SCRIPT with bash, as root, in the chroot,
#     this test's work directory at the same path there.

buildd_setup() {
    need_tool unshare; need_tool chroot
    local name=${2:-buildd}
    buildd=$WORK/$name
    { mkdir "$buildd" && tar -C "$buildd" -xf "$1"; } || skip "cannot unpack $1"
    printf 'APT::Sandbox::User "root";\nAPT::Get::Assume-Yes "true";\nquiet "1";\n' \
        >"$buildd/etc/apt/apt.conf.d/90reprosign-test"
    cp -L /etc/resolv.conf "$buildd/etc/resolv.conf"
    # A mount namespace of its own: its mounts end with it, and none is
    # ever seen by the rm -rf of the work directory.
    cat >"$WORK/in-$name" <<EOF2
#!/bin/sh
exec unshare --mount --propagation private -- sh -ec '
    mount -t proc proc "$buildd/proc"; mount --rbind /dev "$buildd/dev"
    mkdir -p "$buildd$WORK"; mount --bind "$WORK" "$buildd$WORK"
    exec chroot "$buildd" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \\
        DEBIAN_FRONTEND=noninteractive bash -c "\$1"' in-buildd "\$1"
EOF2
    chmod +x "$WORK/in-$name"
}

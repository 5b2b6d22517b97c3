#!/bin/bash
# log monitor reads what the archive publishes, not only plain .sig members
# of tarballs: a .sig in a tarball inside a tarball, a .sig a 1.0 source's
# .diff.gz creates (dpkg-source -x is the oracle that it does), and the
# signed images in binary packages, which are what machines boot: a PE
# image and a module (plain and xz-compressed) in a .deb, signed by the
# service's certificate, must each have a log entry for their digest. The
# twin with everything logged reports nothing. Network-free.
. "$TESTS_DIR/lib.sh"
need_tool dpkg-deb; need_tool dpkg-source; need_tool xz

R=$REPROSIGN
T=$TESTS_DIR/tools
$R log keygen example.org/reprosign --output "$WORK/log" >/dev/null
make_key svc "/CN=reprosign test service"
make_key other "/CN=someone else"
sign() {  # sign KEY IN OUT
    $R sign --key "$WORK/$1.key" --cert "$WORK/$1.crt" --no-signing-time "$2" --output "$3" >/dev/null 2>&1
}
# An archive entry for a signed file: its image digest and its signature's hash.
entry() {  # entry PACKAGE PATH SIGNED-FILE
    local d s
    d=$($R digest "$3") && s=$($R detach "$3" | sha256sum | cut -c1-64) || return 1
    printf '{"format":"x","package":"%s","path":"%s","request":"r1","signature_sha256":"%s","signed_digest":"sha256:%s"}\n' \
        "$1" "$2" "$s" "$d"
}
sig_entry() {  # sig_entry PACKAGE PATH SIGFILE: a signature file's hash
    printf '{"package":"%s","path":"%s","request":"r1","signature_sha256":"%s"}\n' "$1" "$2" "$(sha256sum <"$3" | cut -c1-64)"
}
# A binary package of the files in ROOT.
deb() {  # deb ROOT NAME OUT.deb
    mkdir -p "$1/DEBIAN"
    printf 'Package: %s\nVersion: 1\nArchitecture: amd64\nMaintainer: t <t@example.org>\nDescription: t\n' "$2" >"$1/DEBIAN/control"
    dpkg-deb --root-owner-group -b "$1" "$3" >/dev/null
}

# ---- the twin: every signature and signed image logged ----
python3 "$T/mkpe.py" "$WORK/boot.efi"
python3 "$T/mkko.py" "$WORK/a.ko" --fill 0x11
python3 "$T/mkko.py" "$WORK/b.ko" --fill 0x22
python3 "$T/mkpe.py" "$WORK/foreign.efi" --sections 3
root=$WORK/pkg
mkdir -p "$root/boot" "$root/lib/modules/6.1/kernel" "$root/usr/lib/foreign" "$root/usr/share/doc/pkg"
sign svc "$WORK/boot.efi" "$root/boot/boot.efi.signed"
sign svc "$WORK/a.ko" "$root/lib/modules/6.1/kernel/a.ko"
sign svc "$WORK/b.ko" "$WORK/b.signed.ko" && xz -c "$WORK/b.signed.ko" >"$root/lib/modules/6.1/kernel/b.ko.xz"
sign other "$WORK/foreign.efi" "$root/usr/lib/foreign/foreign.efi.signed"   # not the service's: not the log's business
cp "$WORK/boot.efi" "$root/usr/lib/foreign/unsigned.efi"
echo changelog | gzip -n >"$root/usr/share/doc/pkg/changelog.gz"
{
    entry pkg boot/boot.efi.signed "$root/boot/boot.efi.signed"
    entry pkg lib/modules/6.1/kernel/a.ko "$root/lib/modules/6.1/kernel/a.ko"
    entry pkg lib/modules/6.1/kernel/b.ko "$WORK/b.signed.ko"
} >"$WORK/entries"
check "the signed images' entries were made" test "$(wc -l <"$WORK/entries")" = 3

arch=$WORK/archive
mkdir -p "$arch/pool" "$WORK/in/pkg" "$WORK/out" "$WORK/src"
deb "$root" pkg "$arch/pool/pkg_1_amd64.deb"
# A nested tarball: signatures.tar.gz inside the source tarball.
head -c 600 /dev/urandom >"$WORK/in/pkg/nested.efi.sig"
tar -C "$WORK/in" -czf "$WORK/out/signatures.tar.gz" pkg
tar -C "$WORK/out" -cJf "$arch/pool/pkg-signed_1.tar.xz" signatures.tar.gz
sig_entry pkg nested.efi "$WORK/in/pkg/nested.efi.sig" >>"$WORK/entries"
# A 1.0 source whose .diff.gz creates a signature file (binary: diff -a).
mkdir -p "$WORK/src/foo-1.0" && echo hi >"$WORK/src/foo-1.0/README"
(cd "$WORK/src" && tar -czf foo_1.0.orig.tar.gz foo-1.0 && cp -a foo-1.0 foo-1.0.orig)
mkdir -p "$WORK/src/foo-1.0/debian/signatures/pkg/boot"
head -c 700 /dev/urandom >"$WORK/src/foo-1.0/debian/signatures/pkg/boot/diff.efi.sig"
printf 'foo (1.0-1) unstable; urgency=low\n\n  * t\n\n -- t <t@example.org>  Mon, 01 Jan 2024 00:00:00 +0000\n' \
    >"$WORK/src/foo-1.0/debian/changelog"
(cd "$WORK/src" && { diff -Nrua foo-1.0.orig foo-1.0; true; } | gzip -n >foo_1.0-1.diff.gz)
cat >"$WORK/src/foo_1.0-1.dsc" <<EOF
Format: 1.0
Source: foo
Version: 1.0-1
Files:
 $(cd "$WORK/src" && md5sum foo_1.0.orig.tar.gz | cut -d' ' -f1) $(stat -c %s "$WORK/src/foo_1.0.orig.tar.gz") foo_1.0.orig.tar.gz
 $(cd "$WORK/src" && md5sum foo_1.0-1.diff.gz | cut -d' ' -f1) $(stat -c %s "$WORK/src/foo_1.0-1.diff.gz") foo_1.0-1.diff.gz
EOF
check "dpkg-source -x of the 1.0 source creates the signature file byte for byte" bash -c "
    cd '$WORK/src' && dpkg-source -x foo_1.0-1.dsc unpacked >/dev/null 2>&1 &&
    cmp unpacked/debian/signatures/pkg/boot/diff.efi.sig foo-1.0/debian/signatures/pkg/boot/diff.efi.sig"
cp "$WORK/src/foo_1.0-1.diff.gz" "$WORK/src/foo_1.0.orig.tar.gz" "$WORK/src/foo_1.0-1.dsc" "$arch/pool/"
sig_entry foo boot/diff.efi "$WORK/src/foo-1.0/debian/signatures/pkg/boot/diff.efi.sig" >>"$WORK/entries"
$R log append "$WORK/L" --key "$WORK/log.key" <"$WORK/entries" >/dev/null

monitor() {  # monitor ARCHIVE [options]: its output in $WORK/mon.out
    local a=$1; shift
    $R log monitor "$WORK/L" --archive "$a" --vkey "$WORK/log.vkey" "$@" >"$WORK/mon.out" 2>&1
}
check "the twin, everything logged: the monitor reports nothing" bash -c "
    $(declare -f monitor); R='$R' WORK='$WORK'; monitor '$arch' --cert '$WORK/svc.crt' ||
    { cat '$WORK/mon.out'; exit 1; }
    tail -1 '$WORK/mon.out' | grep -q '5 archive signatures logged, 5 published in 2 tarballs, 1 diffs and 1 binary packages .*(3 images signed by the service).* 0 unpublished, 0 unlogged, 0 not judged' ||
    { cat '$WORK/mon.out'; exit 1; }"
refuses "a binary package and no --cert: refused, since nothing says whose signatures are the service's" "" \
    $R log monitor "$WORK/L" --archive "$arch" --vkey "$WORK/log.vkey"
check "... naming the package" grep -q "pkg_1_amd64.deb: a binary package, and no --cert" "$WORK/.err"

# ---- each escape, alone in a copy of the twin ----
escape() {  # escape NAME: a fresh copy of the archive in $WORK/NAME
    rm -rf "${WORK:?}/$1" && cp -a "$arch" "$WORK/$1"
}
reported() {  # reported WHAT ARCHIVE PATTERN: the monitor fails, naming it
    local what=$1 a=$2 pattern=$3
    if monitor "$a" --cert "$WORK/svc.crt"; then
        fail "$what: the monitor passed"; sed 's/^/    /' "$WORK/mon.out"
    elif ! grep -q -- "$pattern" "$WORK/mon.out"; then
        fail "$what: not reported as /$pattern/"; sed 's/^/    /' "$WORK/mon.out"
    else
        pass "$what ($(grep -- "$pattern" "$WORK/mon.out" | head -1))"
    fi
}

escape nested
head -c 500 /dev/urandom >"$WORK/in/pkg/evil.efi.sig"
tar -C "$WORK/in" -czf "$WORK/out/signatures.tar.gz" pkg
tar -C "$WORK/out" -cJf "$WORK/nested/pool/pkg-signed_1.tar.xz" signatures.tar.gz
reported "an unlogged signature in a tarball inside a tarball" "$WORK/nested" \
    "pool/pkg-signed_1.tar.xz: signatures.tar.gz: pkg/evil.efi.sig: a published signature that the log lacks"
rm "$WORK/in/pkg/evil.efi.sig"

escape diff
head -c 800 /dev/urandom >"$WORK/src/foo-1.0/debian/signatures/pkg/boot/evil.efi.sig"
(cd "$WORK/src" && { diff -Nrua foo-1.0.orig foo-1.0; true; } | gzip -n >"$WORK/diff/pool/foo_1.0-1.diff.gz")
reported "an unlogged signature that a 1.0 source's .diff.gz creates" "$WORK/diff" \
    "pool/foo_1.0-1.diff.gz: foo-1.0/debian/signatures/pkg/boot/evil.efi.sig: a published signature that the log lacks"
rm "$WORK/src/foo-1.0/debian/signatures/pkg/boot/evil.efi.sig"

escape deb-pe
python3 "$T/mkpe.py" "$WORK/evil.efi" --sections 2
mkdir -p "$WORK/evil-pe/boot" && sign svc "$WORK/evil.efi" "$WORK/evil-pe/boot/evil.efi.signed"
deb "$WORK/evil-pe" evil "$WORK/deb-pe/pool/evil_1_amd64.deb"
reported "an unlogged PE image in a .deb signed by the service's certificate" "$WORK/deb-pe" \
    "pool/evil_1_amd64.deb: boot/evil.efi.signed: signed by the service's certificate CN=reprosign test service, image digest sha256:$($R digest "$WORK/evil.efi"), which the log lacks"

# The same image signed through the socket: its entry has no package, and counts.
cp -a "$WORK/L" "$WORK/L-socket"
printf '{"client":{"gid":0,"pid":1,"uid":0},"format":"pe","signed_digest":"sha256:%s"}\n' "$($R digest "$WORK/evil.efi")" |
    $R log append "$WORK/L-socket" --key "$WORK/log.key" >/dev/null
check "... logged by the socket face instead: the monitor passes" bash -c "
    '$R' log monitor '$WORK/L-socket' --archive '$WORK/deb-pe' --vkey '$WORK/log.vkey' --cert '$WORK/svc.crt' >'$WORK/mon.out' ||
    { cat '$WORK/mon.out'; exit 1; }"

escape deb-module
python3 "$T/mkko.py" "$WORK/evil.ko" --fill 0x33
mkdir -p "$WORK/evil-ko/lib/modules/6.1" && sign svc "$WORK/evil.ko" "$WORK/evil.signed.ko"
cp "$WORK/evil.signed.ko" "$WORK/evil-ko/lib/modules/6.1/evil.ko"
deb "$WORK/evil-ko" evil "$WORK/deb-module/pool/evil_1_amd64.deb"
reported "an unlogged module in a .deb signed by the service's certificate" "$WORK/deb-module" \
    "pool/evil_1_amd64.deb: lib/modules/6.1/evil.ko: signed by the service's certificate CN=reprosign test service, image digest sha256:$($R digest "$WORK/evil.ko"), which the log lacks"
escape deb-module-xz
rm "$WORK/evil-ko/lib/modules/6.1/evil.ko" && xz -c "$WORK/evil.signed.ko" >"$WORK/evil-ko/lib/modules/6.1/evil.ko.xz"
deb "$WORK/evil-ko" evil "$WORK/deb-module-xz/pool/evil_1_amd64.deb"
reported "... and the same module xz-compressed, judged by its decompressed bytes" "$WORK/deb-module-xz" \
    "pool/evil_1_amd64.deb: lib/modules/6.1/evil.ko.xz: signed by the service's certificate CN=reprosign test service, image digest sha256:$($R digest "$WORK/evil.ko"), which the log lacks"

escape foreign
mkdir -p "$WORK/other-pe/boot" && sign other "$WORK/evil.efi" "$WORK/other-pe/boot/evil.efi.signed"
deb "$WORK/other-pe" other "$WORK/foreign/pool/other_1_amd64.deb"
check "an image signed by another key is not the log's business" bash -c "
    $(declare -f monitor); R='$R' WORK='$WORK'; monitor '$WORK/foreign' --cert '$WORK/svc.crt' || { cat '$WORK/mon.out'; exit 1; }"

# What the monitor cannot judge fails it too, saying why.
escape changed
printf -- '--- a/debian/signatures/pkg/x.efi.sig\n+++ b/debian/signatures/pkg/x.efi.sig\n@@ -1 +1 @@\n-old\n+new\n' |
    gzip -n >"$WORK/changed/pool/bar_1.0-1.diff.gz"
reported "a .diff.gz that changes a signature file rather than creating it" "$WORK/changed" \
    "pool/bar_1.0-1.diff.gz: b/debian/signatures/pkg/x.efi.sig: not judged: a signature file the diff changes rather than creates"
escape deep
mkdir -p "$WORK/d0" && head -c 100 /dev/urandom >"$WORK/d0/x.efi.sig" && tar -C "$WORK/d0" -czf "$WORK/d1.tar.gz" x.efi.sig
for i in 1 2 3 4 5; do mkdir -p "$WORK/n$i" && mv "$WORK/d$i.tar.gz" "$WORK/n$i/" && tar -C "$WORK/n$i" -czf "$WORK/d$((i + 1)).tar.gz" "d$i.tar.gz"; done
mv "$WORK/d6.tar.gz" "$WORK/deep/pool/"
reported "tarballs nested deeper than the monitor reads" "$WORK/deep" \
    "pool/d6.tar.gz: d5.tar.gz: d4.tar.gz: d3.tar.gz: d2.tar.gz: d1.tar.gz: not judged: a tarball nested more than 4 deep"
finish

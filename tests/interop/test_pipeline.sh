#!/bin/bash
# The two-stage flow on Debian's real shim-helpers-amd64-signed-template:
# sign-template, then dpkg-source -x and dpkg-buildpackage with the
# template's own rules; plus every refusal, and attach-tree.
. "$TESTS_DIR/lib.sh"
need_fixtures shim
need_tool dpkg-source; need_tool dpkg-deb; need_tool sbverify

debs=$FIXTURES/debs
template_deb=$(bash "$TESTS_DIR/tools/newest-deb.sh" "$debs" shim-helpers-amd64-signed-template)
unsigned_deb=$(bash "$TESTS_DIR/tools/newest-deb.sh" "$debs" shim-unsigned)
unsigned_root=$FIXTURES/root/shim-unsigned
make_key db
make_key other
export SOURCE_DATE_EPOCH=1700000000
sign_template() { "$REPROSIGN" sign-template --quiet --key "$WORK/db.key" --cert "$WORK/db.crt" "$@"; }
no_partial() { ! compgen -G "$WORK/.*.partial-*" >/dev/null; }

mkdir -p "$WORK/pkgs"
cp "$unsigned_deb" "$WORK/pkgs/"

# ---- the signing step ----
check "sign-template with the template .deb and the unsigned .deb" \
    sign_template "$template_deb" --packages "$WORK/pkgs" --output "$WORK/out"
check "signatures for both files" test -s "$WORK/out/signatures/shim-unsigned/usr/lib/shim/fbx64.efi.sig" -a \
    -s "$WORK/out/signatures/shim-unsigned/usr/lib/shim/mmx64.efi.sig"
check "a .dsc and a .tar.xz" bash -c "ls '$WORK'/out/shim-helpers-amd64-signed_*.dsc '$WORK'/out/shim-helpers-amd64-signed_*.tar.xz"
check "the source tree carries debian/signatures" \
    test -s "$WORK/out/shim-helpers-amd64-signed-1+16.1+2~deb12u1/debian/signatures/shim-unsigned/usr/lib/shim/fbx64.efi.sig"
check "the .dsc is 3.0 (native)" grep -qx 'Format: 3.0 (native)' "$WORK"/out/*.dsc
check "the manifest lists both files with their signed digests" python3 -c "
import json,sys
m=json.load(open('$WORK/out/manifest.json'))
assert [f['path'] for f in m['files']]==['usr/lib/shim/fbx64.efi','usr/lib/shim/mmx64.efi']
assert m['files'][0]['signed_digest']=='sha256:'+'$("$REPROSIGN" digest "$unsigned_root/usr/lib/shim/fbx64.efi")'
assert m['template']=='shim-helpers-amd64-signed-template' and m['template_version']=='$(dpkg-deb -f "$template_deb" Version)', m
"
check "signatures.tar.gz holds the tree, root-owned, at SOURCE_DATE_EPOCH" bash -c "
    tar tvzf '$WORK/out/signatures.tar.gz' | grep -q 'root/root .* 2023-11-14 22:13 shim-unsigned/usr/lib/shim/fbx64.efi.sig' &&
    ! tar tvzf '$WORK/out/signatures.tar.gz' | grep -v 'root/root'"
check "a detached signature fits the unsigned file" \
    "$REPROSIGN" attach "$WORK/out/signatures/shim-unsigned/usr/lib/shim/fbx64.efi.sig" \
    "$unsigned_root/usr/lib/shim/fbx64.efi" --output "$WORK/fbx64.signed"
check "... and verifies with the key's certificate" sbverify --cert "$WORK/db.crt" "$WORK/fbx64.signed"

check "a second run" sign_template "$template_deb" --packages "$WORK/pkgs" --output "$WORK/out2" --jobs 1
check "same inputs, same SOURCE_DATE_EPOCH: identical signatures.tar.gz" same_bytes "$WORK/out/signatures.tar.gz" "$WORK/out2/signatures.tar.gz"
check "... and identical source package" bash -c "cd '$WORK/out' && for f in *.dsc shim-helpers-amd64-signed_*.tar.xz; do cmp \"\$f\" '$WORK/out2/'\"\$f\" || exit 1; done"

# Other template and package shapes give the same signatures.
dpkg-deb -x "$template_deb" "$WORK/template-root"
mkdir -p "$WORK/roots" && cp -a "$unsigned_root" "$WORK/roots/shim-unsigned"
json=$WORK/template-root/usr/share/code-signing/shim-helpers-amd64-signed-template/files.json
check "unpacked template root, unpacked package root" \
    sign_template "$WORK/template-root" --packages "$WORK/roots" --output "$WORK/out3"
check "... gives the same signatures" same_bytes "$WORK/out3/signatures.tar.gz" "$WORK/out/signatures.tar.gz"
check "... and the same source package" bash -c "cd '$WORK/out' && for f in *.dsc shim-helpers-amd64-signed_*.tar.xz; do cmp \"\$f\" '$WORK/out3/'\"\$f\" || exit 1; done"
# The manifest keeps files.json's order whatever order the files are
# signed in (signatures.tar.gz's, sorted by path): here, the reverse.
python3 -c "
import json
d=json.load(open('$json'))
for p in d['packages'].values(): p['files'].reverse()
json.dump(d, open('$WORK/reversed.json', 'w'))"
check "files.json listing the files in reverse" \
    sign_template "$WORK/reversed.json" --packages "$WORK/roots" --output "$WORK/out-reversed"
check "... gives the manifest in that order, the same entries" python3 -c "
import json
a=json.load(open('$WORK/out/manifest.json'))['files']; b=json.load(open('$WORK/out-reversed/manifest.json'))['files']
assert [f['path'] for f in b]==['usr/lib/shim/mmx64.efi','usr/lib/shim/fbx64.efi'], b
assert b==list(reversed(a))"
check "... and the same signatures.tar.gz" same_bytes "$WORK/out-reversed/signatures.tar.gz" "$WORK/out/signatures.tar.gz"
# The manifest is written entry by entry: a path that JSON must escape
# still reads back as itself.
odd='usr/lib/shim/a "quoted" ünïcode name.efi'
cp "$unsigned_root/usr/lib/shim/fbx64.efi" "$WORK/roots/shim-unsigned/$(printf "$odd")"
python3 -c "
import json
json.dump({'packages': {'shim-unsigned': {'files': [{'sig_type': 'efi', 'file': '$odd'}]}}}, open('$WORK/odd.json', 'w'))"
check "a path with a quote, non-ASCII and DEL" \
    sign_template "$WORK/odd.json" --packages "$WORK/roots" --output "$WORK/out-odd"
check "... is the manifest's path, read back by Python's json" python3 -c "
import json
m=json.load(open('$WORK/out-odd/manifest.json'))
assert [f['path'] for f in m['files']]==['$odd'], m
assert list(m)==['files'], 'a files.json alone names no template, and no member is null'"
rm "$WORK/roots/shim-unsigned/$(printf "$odd")"
# An unpacked template's source-template is copied without following
# links. A relative symlink to a name inside it is carried into the
# source package; one that is absolute, escapes or dangles is refused,
# naming the link and its target, and so is a FIFO.
tsrc=$WORK/template-root/usr/share/code-signing/shim-helpers-amd64-signed-template/source-template
declare -A special_why=(
    [abs]="source-template/debian/passwd: symlink to /etc/passwd is absolute"
    [escape]="source-template/debian/up: symlink to ../../x escapes the source template"
    [reenter]="source-template/debian/back: symlink to ../../source-template/debian/rules escapes the source template"
    [dangle]="source-template/debian/gone: symlink to nothing dangles"
    [fifo]="source-template/debian/fifo: special files are not allowed in a source template")
for special in abs escape reenter dangle fifo; do
    cp -a "$WORK/template-root" "$WORK/template-$special"
    t=${tsrc/template-root/template-$special}
    case $special in
    abs) ln -s /etc/passwd "$t/debian/passwd" ;;
    escape) ln -s ../../x "$t/debian/up" ;;
    reenter) ln -s ../../source-template/debian/rules "$t/debian/back" ;;
    dangle) ln -s nothing "$t/debian/gone" ;;
    fifo) mkfifo "$t/debian/fifo" ;;
    esac
    refuses "a source-template holding a symlink or special file ($special)" "$WORK/out-$special" \
        sign_template "$WORK/template-$special" --packages "$WORK/roots" --output "$WORK/out-$special"
    check "... naming it and its target" grep -qF "${special_why[$special]}" "$WORK/.err"
done
# The same refusal from a template .deb, whose source-template/ is
# extracted with its symlinks before the copy checks them.
mkdir -p "$WORK/escape-deb"
dpkg-deb -R "$template_deb" "$WORK/escape-deb/root"
ln -s ../../../../../../etc "${tsrc/template-root/escape-deb/root}/debian/etc"
dpkg-deb -b "$WORK/escape-deb/root" "$WORK/escape-deb/template.deb" >/dev/null
refuses "a template .deb whose source-template holds an escaping symlink" "$WORK/out-escape-deb" \
    sign_template "$WORK/escape-deb/template.deb" --packages "$WORK/pkgs" --output "$WORK/out-escape-deb"
check "... naming it and its target" grep -qF "source-template/debian/etc: symlink to ../../../../../../etc escapes the source template" "$WORK/.err"
cp -a "$WORK/template-root" "$WORK/template-inside"
ln -s rules "${tsrc/template-root/template-inside}/debian/rules-link"
mkdir "${tsrc/template-root/template-inside}/debian/sub"
ln -s ../control "${tsrc/template-root/template-inside}/debian/sub/control"
check "symlinks resolving inside the source-template are accepted" \
    sign_template "$WORK/template-inside" --packages "$WORK/roots" --output "$WORK/out-inside"
check "... and carried into the source package as symlinks" bash -c "
    cd '$WORK/out-inside' && dpkg-source -x *.dsc unpacked >/dev/null 2>&1 &&
    [ \"\$(readlink unpacked/debian/rules-link)\" = rules ] && [ \"\$(readlink unpacked/debian/sub/control)\" = ../control ]"
# debian/changelog is read only to the end of its first entry: a long
# history is accepted, a first entry over its limit is refused by size.
cp -a "$WORK/template-root" "$WORK/template-longlog"
cl=${tsrc/template-root/template-longlog}/debian/changelog
{ cat "$cl"; for i in $(seq 20000); do printf 'old (0.%d) unstable; urgency=low\n\n  * %0400d\n\n -- x <x@x>  Mon, 01 Jan 2001 00:00:00 +0000\n\n' "$i" 0; done; } >"$cl.new"
mv "$cl.new" "$cl"
check "a changelog of $(($(stat -c %s "$cl") / 1048576)) MiB is accepted" \
    sign_template "$WORK/template-longlog" --packages "$WORK/roots" --output "$WORK/out-longlog"
cp -a "$WORK/template-root" "$WORK/template-longentry"
cl=${tsrc/template-root/template-longentry}/debian/changelog
{ head -n 2 "$cl"; for i in $(seq 100000); do printf '  * %0100d\n' 0; done; tail -n +3 "$cl"; } >"$cl.new"
mv "$cl.new" "$cl"
refuses "a changelog whose first entry is over its limit" "$WORK/out-longentry" \
    sign_template "$WORK/template-longentry" --packages "$WORK/roots" --output "$WORK/out-longentry"
check "... naming the file and the limit" grep -q "source-template/debian/changelog: the first entry is over the limit of 8388608 bytes" "$WORK/.err"
python3 -c "import json; d=json.load(open('$json')); json.dump(d['packages'], open('$WORK/bare.json','w'))"
python3 -c "import json; d=json.load(open('$json')); d['version']='2'; json.dump(d, open('$WORK/v2.json','w'))"
for form in bare v2; do
    check "files.json form '$form'" sign_template "$WORK/$form.json" --packages "$WORK/pkgs" --output "$WORK/out-$form"
    check "... byte for byte" diff -r "$WORK/out-$form/signatures" "$WORK/out/signatures"
done
check "a bare files.json makes no source package" bash -c "! ls '$WORK'/out-bare/*.dsc 2>/dev/null"

# ---- the second stage, with Debian's own tooling ----
if [ "$(id -u)" = 0 ] && command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null; then
    version=$(dpkg-deb -f "$unsigned_deb" Version)
    dpkg -s shim-unsigned 2>/dev/null | grep -qx "Version: $version" || dpkg -i "$unsigned_deb" >/dev/null 2>&1
    check "dpkg-source -x unpacks the .dsc" bash -c "cd '$WORK' && dpkg-source -x out/*.dsc stage2 >/dev/null 2>&1"
    check "dpkg-buildpackage -us -uc -b builds it (the template's rules run sbattach)" \
        bash -c "cd '$WORK/stage2' && dpkg-buildpackage -us -uc -b >'$WORK/build.log' 2>&1 || { tail -20 '$WORK/build.log'; exit 1; }"
    mkdir -p "$WORK/built"
    dpkg-deb -x "$WORK"/shim-helpers-amd64-signed_*.deb "$WORK/built" 2>/dev/null
    for f in fbx64 mmx64; do
        check "built $f.efi.signed verifies with the test CA" sbverify --cert "$WORK/db.crt" "$WORK/built/usr/lib/shim/$f.efi.signed"
        check "built $f.efi.signed is what reprosign attach gives" bash -c "
            '$REPROSIGN' attach '$WORK/out/signatures/shim-unsigned/usr/lib/shim/$f.efi.sig' '$unsigned_root/usr/lib/shim/$f.efi' --output '$WORK/$f.mine' &&
            cmp -s '$WORK/$f.mine' '$WORK/built/usr/lib/shim/$f.efi.signed'"
    done
else
    leave_out "not root or no debhelper: the dpkg-buildpackage steps"
fi

# ---- refusals: each names the entry, signs nothing, leaves no output ----
evil() {  # evil NAME JSON: a bare files.json template
    printf '%s' "$2" >"$WORK/$1.json"
}
evil badname '{"Shim_Unsigned": {"files": [{"sig_type": "efi", "file": "usr/lib/shim/fbx64.efi"}]}}'
evil absolute '{"shim-unsigned": {"files": [{"sig_type": "efi", "file": "/usr/lib/shim/fbx64.efi"}]}}'
evil dotdot '{"shim-unsigned": {"files": [{"sig_type": "efi", "file": "usr/lib/../lib/shim/fbx64.efi"}]}}'
evil missing '{"shim-unsigned": {"files": [{"sig_type": "efi", "file": "usr/lib/shim/nope.efi"}]}}'
evil directory '{"shim-unsigned": {"files": [{"sig_type": "efi", "file": "usr/lib/shim"}]}}'
evil sigtype '{"shim-unsigned": {"files": [{"sig_type": "linux-module", "file": "usr/lib/shim/fbx64.efi"}]}}'
evil unknowntype '{"shim-unsigned": {"files": [{"sig_type": "kernel", "file": "usr/lib/shim/fbx64.efi"}]}}'
evil nopackage '{"grub-efi-amd64-bin": {"files": [{"sig_type": "efi", "file": "usr/lib/grub/x.efi"}]}}'
fpr=$(openssl x509 -in "$WORK/other.crt" -outform DER | sha256sum | cut -d' ' -f1)
evil trusted "{\"shim-unsigned\": {\"trusted_certs\": [\"$fpr\"], \"files\": [{\"sig_type\": \"efi\", \"file\": \"usr/lib/shim/fbx64.efi\"}]}}"
evil notjson '{"shim-unsigned": {"files": [}'
evil twice '{"shim-unsigned": {"files": [{"sig_type": "efi", "file": "usr/lib/shim/fbx64.efi"}, {"sig_type": "efi", "file": "usr/lib/shim/fbx64.efi"}]}}'
evil nofiles '{"shim-unsigned": {"files": []}}'
for t in badname absolute dotdot missing directory sigtype unknowntype nopackage trusted notjson twice nofiles; do
    refuses "refuses template '$t'" "$WORK/refused-$t" \
        sign_template "$WORK/$t.json" --packages "$WORK/pkgs" --output "$WORK/refused-$t"
    check "... and leaves no partial output ($t)" no_partial
done
check "the trusted_certs refusal names package and fingerprint" bash -c "
    sign_template() { '$REPROSIGN' sign-template --quiet --key '$WORK/db.key' --cert '$WORK/db.crt' \"\$@\"; }
    sign_template '$WORK/trusted.json' --packages '$WORK/pkgs' --output '$WORK/x' 2>&1 | grep -q 'shim-unsigned.*$fpr.*allowlist'"
# Files that cannot be written (here, over a 1 KiB file size limit) fail
# the run, naming the file and the reason, and leave nothing behind. The
# signature files are written by the tarball's thread, which must hand
# its error back; the template's files are buffered with pwrite, whose
# short write must not report a stale errno.
evil one-file '{"shim-unsigned": {"files": [{"sig_type": "efi", "file": "usr/lib/shim/fbx64.efi"}]}}'
small_files() { bash -c "trap '' XFSZ; ulimit -f 1; exec \"\$@\"" _ "$REPROSIGN" sign-template --quiet \
    --key "$WORK/db.key" --cert "$WORK/db.crt" "$@"; }
refuses "a signature that cannot be written fails the run" "$WORK/refused-fsize" \
    small_files "$WORK/one-file.json" --packages "$(dirname "$unsigned_root")" --output "$WORK/refused-fsize"
check "... naming the signature file and the reason" grep -q 'fbx64\.efi\.sig: write failed: File too large' "$WORK/.err"
check "... and leaves no partial output (fsize)" no_partial
refuses "a template file that cannot be buffered fails the run" "$WORK/refused-fsize2" \
    small_files "$template_deb" --packages "$WORK/pkgs" --output "$WORK/refused-fsize2"
check "... naming the template once, the file, where it could not be written and the reason" grep -qx \
    "reprosign: $template_deb: source template: debian/control: cannot write $WORK/\.refused-fsize2\.partial-[^/]*/source-template/debian/control: File too large" \
    "$WORK/.err"
check "... and leaves no partial output (fsize2)" no_partial
echo "$fpr  # the test key" >"$WORK/allow.txt"
check "an allowlisted trusted_certs entry is accepted" \
    sign_template "$WORK/trusted.json" --packages "$WORK/pkgs" --output "$WORK/allowed" --trusted-cert-allowlist "$WORK/allow.txt"

# Symlinks that leave the package, in an unpacked root and in a .deb.
mkdir -p "$WORK/evil-roots/shim-unsigned/usr/lib/shim"
ln -s /etc/passwd "$WORK/evil-roots/shim-unsigned/usr/lib/shim/abs.efi"
ln -s ../../../../../../etc/passwd "$WORK/evil-roots/shim-unsigned/usr/lib/shim/rel.efi"
ln -s /usr/lib "$WORK/evil-roots/shim-unsigned/usr/lib/shim/dir"
cp "$unsigned_root/usr/lib/shim/fbx64.efi" "$WORK/evil-roots/shim-unsigned/usr/lib/shim/real.efi"
ln -s real.efi "$WORK/evil-roots/shim-unsigned/usr/lib/shim/inside.efi"
for link in abs rel; do
    evil "link-$link" "{\"shim-unsigned\": {\"files\": [{\"sig_type\": \"efi\", \"file\": \"usr/lib/shim/$link.efi\"}]}}"
    refuses "refuses a symlink escaping the unpacked package ($link)" "$WORK/refused-link-$link" \
        sign_template "$WORK/link-$link.json" --packages "$WORK/evil-roots" --output "$WORK/refused-link-$link"
done
evil link-dir '{"shim-unsigned": {"files": [{"sig_type": "efi", "file": "usr/lib/shim/dir/shim/fbx64.efi"}]}}'
refuses "refuses a directory symlink escaping the package" "$WORK/refused-link-dir" \
    sign_template "$WORK/link-dir.json" --packages "$WORK/evil-roots" --output "$WORK/refused-link-dir"
# A path that ends on a directory through its last symlink names the path.
ln -s . "$WORK/evil-roots/shim-unsigned/usr/lib/shim/dot.efi"
ln -s .. "$WORK/evil-roots/shim-unsigned/usr/lib/shim/up.efi"
for link in dot up; do
    evil "link-$link" "{\"shim-unsigned\": {\"files\": [{\"sig_type\": \"efi\", \"file\": \"usr/lib/shim/$link.efi\"}]}}"
    refuses "refuses a symlink to a directory ($link)" "$WORK/refused-link-$link" \
        sign_template "$WORK/link-$link.json" --packages "$WORK/evil-roots" --output "$WORK/refused-link-$link"
    check "the refusal names usr/lib/shim/$link.efi" grep -q "usr/lib/shim/$link.efi: not a regular file" "$WORK/.err"
done
evil link-inside '{"shim-unsigned": {"files": [{"sig_type": "efi", "file": "usr/lib/shim/inside.efi"}]}}'
check "follows a symlink that stays inside the package" \
    sign_template "$WORK/link-inside.json" --packages "$WORK/evil-roots" --output "$WORK/inside"
# Directories and symlinks are looked up once per package; a later path
# through them is held to the same rules as the first.
ln -s ../../.. "$WORK/evil-roots/shim-unsigned/usr/lib/shim/top"
ln -s ../../../.. "$WORK/evil-roots/shim-unsigned/usr/lib/shim/above"
ln -s loop "$WORK/evil-roots/shim-unsigned/usr/lib/shim/loop"
evil link-again '{"shim-unsigned": {"files": [{"sig_type": "efi", "file": "usr/lib/shim/inside.efi"}, {"sig_type": "efi", "file": "usr/lib/shim/top/usr/lib/shim/top/usr/lib/shim/real.efi"}]}}'
check "follows a known directory symlink again" \
    sign_template "$WORK/link-again.json" --packages "$WORK/evil-roots" --output "$WORK/again"
# A signature file where another signature needs a directory.
mkdir -p "$WORK/evil-roots/shim-unsigned/usr/lib/shim/real.efi.sig"
cp "$unsigned_root/usr/lib/shim/fbx64.efi" "$WORK/evil-roots/shim-unsigned/usr/lib/shim/real.efi.sig/x.efi"
evil collide '{"shim-unsigned": {"files": [{"sig_type": "efi", "file": "usr/lib/shim/real.efi.sig/x.efi"}, {"sig_type": "efi", "file": "usr/lib/shim/real.efi"}]}}'
refuses "refuses two signatures that collide as file and directory" "$WORK/refused-collide" \
    sign_template "$WORK/collide.json" --packages "$WORK/evil-roots" --output "$WORK/refused-collide"
for t in rel.efi dir/shim/fbx64.efi top/usr/lib/shim/above/x.efi loop; do
    evil link-later "{\"shim-unsigned\": {\"files\": [{\"sig_type\": \"efi\", \"file\": \"usr/lib/shim/real.efi\"}, {\"sig_type\": \"efi\", \"file\": \"usr/lib/shim/top/usr/lib/shim/real.efi\"}, {\"sig_type\": \"efi\", \"file\": \"usr/lib/shim/$t\"}]}}"
    refuses "refuses $t after paths through the same directories" "$WORK/refused-later" \
        sign_template "$WORK/link-later.json" --packages "$WORK/evil-roots" --output "$WORK/refused-later"
done

mkdir -p "$WORK/evil-deb/DEBIAN" "$WORK/evil-deb/usr/lib/shim" "$WORK/evil-debs"
printf 'Package: shim-unsigned\nVersion: 1.0\nArchitecture: amd64\nMaintainer: t <t@t>\nDescription: t\n' >"$WORK/evil-deb/DEBIAN/control"
ln -s /etc/passwd "$WORK/evil-deb/usr/lib/shim/abs.efi"
ln -s ../../../../etc/passwd "$WORK/evil-deb/usr/lib/shim/rel.efi"
dpkg-deb -b "$WORK/evil-deb" "$WORK/evil-debs/evil.deb" >/dev/null 2>&1
for link in abs rel; do
    refuses "refuses a symlink escaping the .deb ($link)" "$WORK/refused-deb-$link" \
        sign_template "$WORK/link-$link.json" --packages "$WORK/evil-debs" --output "$WORK/refused-deb-$link"
done

# A hard link in a .deb carries no bytes of its own: they are read from the
# entry it names, and the signature is the same as for that file.
mkdir -p "$WORK/hl/DEBIAN" "$WORK/hl/usr/lib/shim" "$WORK/hldebs"
printf 'Package: hardlinked\nVersion: 1.0\nArchitecture: amd64\nMaintainer: t <t@t>\nDescription: t\n' >"$WORK/hl/DEBIAN/control"
cp "$unsigned_root/usr/lib/shim/fbx64.efi" "$WORK/hl/usr/lib/shim/a.efi"
ln "$WORK/hl/usr/lib/shim/a.efi" "$WORK/hl/usr/lib/shim/b.efi"
dpkg-deb -b "$WORK/hl" "$WORK/hldebs/hl.deb" >/dev/null 2>&1
evil hardlink '{"hardlinked": {"files": [{"sig_type": "efi", "file": "usr/lib/shim/a.efi"}, {"sig_type": "efi", "file": "usr/lib/shim/b.efi"}]}}'
check "a hard-linked file in a .deb is signed" \
    sign_template "$WORK/hardlink.json" --packages "$WORK/hldebs" --output "$WORK/hardlinked"
check "... like the file it links to" \
    cmp -s "$WORK/hardlinked/signatures/hardlinked/usr/lib/shim/a.efi.sig" "$WORK/hardlinked/signatures/hardlinked/usr/lib/shim/b.efi.sig"

# In a .deb, files named as they are in files.json are digested on the
# walk that lists the package; paths through symlinks are read again once
# resolved. Both must sign the same bytes, and a wrong sig_type is still
# refused by name.
mkdir -p "$WORK/sl/DEBIAN" "$WORK/sl/usr/lib/shim" "$WORK/sldebs"
printf 'Package: linked\nVersion: 1.0\nArchitecture: amd64\nMaintainer: t <t@t>\nDescription: t\n' >"$WORK/sl/DEBIAN/control"
cp "$unsigned_root/usr/lib/shim/fbx64.efi" "$WORK/sl/usr/lib/shim/real.efi"
ln -s real.efi "$WORK/sl/usr/lib/shim/link.efi"
ln -s shim "$WORK/sl/usr/lib/alias"
dpkg-deb -b "$WORK/sl" "$WORK/sldebs/sl.deb" >/dev/null 2>&1
evil deblinks '{"linked": {"files": [{"sig_type": "efi", "file": "usr/lib/shim/real.efi"}, {"sig_type": "efi", "file": "usr/lib/shim/link.efi"}, {"sig_type": "efi", "file": "usr/lib/alias/real.efi"}]}}'
check "a .deb: the file, a symlink to it and a path through a directory symlink" \
    sign_template "$WORK/deblinks.json" --packages "$WORK/sldebs" --output "$WORK/deblinks"
check "... all three signatures are the file's" bash -c "
    cd '$WORK/deblinks/signatures/linked/usr/lib' && cmp -s shim/real.efi.sig shim/link.efi.sig && cmp -s shim/real.efi.sig alias/real.efi.sig"
mkdir -p "$WORK/slroots" && cp -a "$WORK/sl" "$WORK/slroots/linked"
check "... and the same as from the unpacked package" bash -c "
    '$REPROSIGN' sign-template --quiet --key '$WORK/db.key' --cert '$WORK/db.crt' '$WORK/deblinks.json' \
        --packages '$WORK/slroots' --output '$WORK/deblinks-root' &&
    diff -r '$WORK/deblinks/signatures' '$WORK/deblinks-root/signatures'"
evil debtype '{"linked": {"files": [{"sig_type": "linux-module", "file": "usr/lib/shim/real.efi"}]}}'
refuses "a .deb: a wrong sig_type is refused" "$WORK/refused-debtype" \
    sign_template "$WORK/debtype.json" --packages "$WORK/sldebs" --output "$WORK/refused-debtype"
check "... naming the file and both types" grep -q 'real.efi: declared linux-module, but the file is a pe file' "$WORK/.err"

# Several versions of one package: the template's version decides.
mkdir -p "$WORK/twover/DEBIAN" && cp -a "$unsigned_root/usr" "$WORK/twover/"
sed "s/^Version: .*/Version: 99.0/" <(dpkg-deb -f "$unsigned_deb") >"$WORK/twover/DEBIAN/control"
mkdir -p "$WORK/versions" && cp "$unsigned_deb" "$WORK/versions/" && dpkg-deb -b "$WORK/twover" "$WORK/versions/newer.deb" >/dev/null 2>&1
check "two versions: the template .deb picks its own" \
    sign_template "$template_deb" --packages "$WORK/versions" --output "$WORK/picked"
check "... and signs that version's files" diff -r "$WORK/picked/signatures" "$WORK/out/signatures"
refuses "two versions and a bare files.json: ambiguous" "$WORK/ambiguous" \
    sign_template "$WORK/bare.json" --packages "$WORK/versions" --output "$WORK/ambiguous"
check "the ambiguity error lists the versions" grep -q 'ambiguous.*99.0' "$WORK/.err"
check "... and names the packages directory" grep -qF "reprosign: $WORK/versions: package " "$WORK/.err"
mkdir -p "$WORK/onlynew" && cp "$WORK/versions/newer.deb" "$WORK/onlynew/"
refuses "only another version present: refused" "$WORK/wrongver" \
    sign_template "$template_deb" --packages "$WORK/onlynew" --output "$WORK/wrongver"
# A name that is not ASCII (UTF-8, as Debian's file names are): reprosign
# runs in the C locale, and the tarball must still carry it as it is.
mkdir -p "$WORK/utf8-roots/shim-unsigned/usr/lib/shim/été"
cp "$unsigned_root/usr/lib/shim/fbx64.efi" "$WORK/utf8-roots/shim-unsigned/usr/lib/shim/été/fb.efi"
evil utf8 '{"shim-unsigned": {"files": [{"sig_type": "efi", "file": "usr/lib/shim/été/fb.efi"}]}}'
check "a UTF-8 file name is signed" sign_template "$WORK/utf8.json" --packages "$WORK/utf8-roots" --output "$WORK/utf8"
check "... and signatures.tar.gz carries the name as it is" bash -c "
    mkdir '$WORK/utf8-x' && tar -xzf '$WORK/utf8/signatures.tar.gz' -C '$WORK/utf8-x' &&
    cmp '$WORK/utf8-x/shim-unsigned/usr/lib/shim/été/fb.efi.sig' '$WORK/utf8/signatures/shim-unsigned/usr/lib/shim/été/fb.efi.sig'"
refuses "OUTDIR that already exists" "" sign_template "$template_deb" --packages "$WORK/pkgs" --output "$WORK/out"
refuses "a template that is not a template" "$WORK/nt" sign_template "$unsigned_deb" --packages "$WORK/pkgs" --output "$WORK/nt"
check "no partial output anywhere" no_partial

# ---- attach-tree ----
sigs=$WORK/out/signatures/shim-unsigned
check "attach-tree into an output root" "$REPROSIGN" attach-tree --quiet --signatures "$sigs" --root "$unsigned_root" \
    --output "$WORK/tree-out" --suffix .signed
for f in fbx64 mmx64; do
    check "attach-tree $f equals reprosign attach" bash -c "
        '$REPROSIGN' attach '$sigs/usr/lib/shim/$f.efi.sig' '$unsigned_root/usr/lib/shim/$f.efi' --output '$WORK/$f.one' &&
        cmp -s '$WORK/$f.one' '$WORK/tree-out/usr/lib/shim/$f.efi.signed'"
done
cp -a "$unsigned_root" "$WORK/inplace"
check "attach-tree in place" "$REPROSIGN" attach-tree --quiet --signatures "$sigs" --root "$WORK/inplace"
check "... signed both files" bash -c "sbverify --cert '$WORK/db.crt' '$WORK/inplace/usr/lib/shim/fbx64.efi' && sbverify --cert '$WORK/db.crt' '$WORK/inplace/usr/lib/shim/mmx64.efi'"
cp -a "$unsigned_root" "$WORK/tampered"
printf 'X' | dd of="$WORK/tampered/usr/lib/shim/mmx64.efi" bs=1 seek=4000 conv=notrunc status=none
cp -a "$WORK/tampered" "$WORK/tampered.orig"
"$REPROSIGN" attach-tree --quiet --signatures "$sigs" --root "$WORK/tampered" 2>"$WORK/tree.err"
rc=$?
check "attach-tree refuses a tree with one tampered file" test "$rc" -eq 1
check "... naming that file with both digests" grep -q 'mmx64.efi: signature does not match the image: signed digest sha256:.*image digest sha256:' "$WORK/tree.err"
check "... and not the good one" bash -c "! grep -q 'fbx64.efi:' '$WORK/tree.err'"
check "... and writes nothing" diff -r "$WORK/tampered" "$WORK/tampered.orig"
"$REPROSIGN" attach-tree --quiet --signatures "$sigs" --root "$WORK/tampered" --output "$WORK/tampered-out" 2>/dev/null
check "... not even into an output root" bash -c "[ ! -e '$WORK/tampered-out/usr/lib/shim/fbx64.efi' ]"
refuses "attach-tree with no signatures" "" "$REPROSIGN" attach-tree --signatures "$WORK/roots" --root "$unsigned_root"
mkdir -p "$WORK/linked-sigs/usr/lib/shim"
cp "$sigs/usr/lib/shim/fbx64.efi.sig" "$WORK/linked-sigs/usr/lib/shim/"
ln -s "$sigs/usr/lib/shim/mmx64.efi.sig" "$WORK/linked-sigs/usr/lib/shim/mmx64.efi.sig"
refuses "attach-tree with a .sig that is a symlink (it would be skipped)" "$WORK/linked-out" \
    "$REPROSIGN" attach-tree --signatures "$WORK/linked-sigs" --root "$unsigned_root" --output "$WORK/linked-out"
check "... naming it" grep -q 'linked-sigs/usr/lib/shim/mmx64.efi.sig: not a regular file' "$WORK/.err"
# Targets are opened beneath the root: a symlink that leads out of it is
# refused, one that stays inside is followed.
mkdir -p "$WORK/esc-root/usr/lib" "$WORK/esc-outside"
cp -a "$unsigned_root/usr/lib/shim" "$WORK/esc-outside/shim"
cp -a "$WORK/esc-outside" "$WORK/esc-outside.orig"
ln -s "$WORK/esc-outside/shim" "$WORK/esc-root/usr/lib/shim"
"$REPROSIGN" attach-tree --quiet --signatures "$sigs" --root "$WORK/esc-root" 2>"$WORK/esc.err"
rc=$?
check "attach-tree refuses targets behind a symlink out of the root" test "$rc" -eq 1
check "... naming each with the reason" bash -c "
    grep -q 'esc-root/usr/lib/shim/fbx64.efi: leads outside .*esc-root (through \"..\" or a symbolic link)' '$WORK/esc.err' &&
    grep -q 'esc-root/usr/lib/shim/mmx64.efi: leads outside' '$WORK/esc.err'"
check "... and leaves the files it leads to as they were" diff -r "$WORK/esc-outside" "$WORK/esc-outside.orig"
mkdir -p "$WORK/in-root/usr/lib"
cp -a "$unsigned_root/usr/lib/shim" "$WORK/in-root/usr/lib/shim-real"
ln -s shim-real "$WORK/in-root/usr/lib/shim"
check "attach-tree follows a symlink that stays inside the root" \
    "$REPROSIGN" attach-tree --quiet --signatures "$sigs" --root "$WORK/in-root"
check "... and signs the file it leads to" sbverify --cert "$WORK/db.crt" "$WORK/in-root/usr/lib/shim-real/fbx64.efi"
check "... keeping the symlink" test -L "$WORK/in-root/usr/lib/shim"
# In place, a target that is itself a symlink: the file it leads to is
# signed and the link stays; two names of one file are refused.
mkdir -p "$WORK/link-root/usr/lib/shim"
cp "$unsigned_root/usr/lib/shim/fbx64.efi" "$WORK/link-root/usr/lib/shim/fb-real.efi"
ln -s fb-real.efi "$WORK/link-root/usr/lib/shim/fbx64.efi"
cp "$unsigned_root/usr/lib/shim/mmx64.efi" "$WORK/link-root/usr/lib/shim/mmx64.efi"
cp -a "$WORK/link-root" "$WORK/link-root.orig"
mkdir -p "$WORK/two-names/usr/lib/shim"
cp "$sigs/usr/lib/shim/fbx64.efi.sig" "$WORK/two-names/usr/lib/shim/fbx64.efi.sig"
cp "$sigs/usr/lib/shim/fbx64.efi.sig" "$WORK/two-names/usr/lib/shim/fb-real.efi.sig"
"$REPROSIGN" attach-tree --quiet --signatures "$WORK/two-names" --root "$WORK/link-root" 2>"$WORK/two.err"
rc=$?
check "attach-tree in place refuses two signatures for one file (a symlink and its target)" test "$rc" -eq 1
check "... naming both" grep -q 'link-root/usr/lib/shim/fbx64.efi: the same file as .*link-root/usr/lib/shim/fb-real.efi' "$WORK/two.err"
check "... and writes nothing" diff -r "$WORK/link-root" "$WORK/link-root.orig"
check "attach-tree in place through a symlink" \
    "$REPROSIGN" attach-tree --quiet --signatures "$sigs" --root "$WORK/link-root"
check "... signs the file the symlink leads to" sbverify --cert "$WORK/db.crt" "$WORK/link-root/usr/lib/shim/fb-real.efi"
check "... and keeps the symlink" test -L "$WORK/link-root/usr/lib/shim/fbx64.efi"
check "... also with ROOT given as OUTROOT" bash -c "
    cp -a '$WORK/link-root.orig' '$WORK/link-root2' &&
    '$REPROSIGN' attach-tree --quiet --signatures '$sigs' --root '$WORK/link-root2' --output '$WORK/link-root2/' &&
    test -L '$WORK/link-root2/usr/lib/shim/fbx64.efi' &&
    sbverify --cert '$WORK/db.crt' '$WORK/link-root2/usr/lib/shim/fb-real.efi' >/dev/null"
# Two names of one file through a bind mount inside the root (no link, no
# symlink: only the mount tells), in a mount namespace of the test's own.
mkdir -p "$WORK/bind-root/usr/lib/shim" "$WORK/bind-root/usr/lib/shim-bound" "$WORK/bind-sigs/usr/lib/shim" \
    "$WORK/bind-sigs/usr/lib/shim-bound"
cp "$unsigned_root/usr/lib/shim/fbx64.efi" "$WORK/bind-root/usr/lib/shim/"
cp "$sigs/usr/lib/shim/fbx64.efi.sig" "$WORK/bind-sigs/usr/lib/shim/"
cp "$sigs/usr/lib/shim/fbx64.efi.sig" "$WORK/bind-sigs/usr/lib/shim-bound/"
unshare_mount=$([ "$(id -u)" = 0 ] && echo "unshare -m" || echo "unshare -rm")
if ! $unshare_mount true 2>/dev/null; then
    leave_out "a bind mount needs a mount namespace, which this machine does not give"
else
    $unshare_mount bash -c "mount --bind '$WORK/bind-root/usr/lib/shim' '$WORK/bind-root/usr/lib/shim-bound' &&
        '$REPROSIGN' attach-tree --quiet --signatures '$WORK/bind-sigs' --root '$WORK/bind-root'" 2>"$WORK/bind.err"
    rc=$?
    check "attach-tree in place refuses two signatures for one file seen through a bind mount" test "$rc" -eq 1
    check "... naming both" grep -q 'bind-root/usr/lib/shim/fbx64.efi: the same file as .*bind-root/usr/lib/shim-bound/fbx64.efi' "$WORK/bind.err"
    check "... and writes nothing" cmp "$WORK/bind-root/usr/lib/shim/fbx64.efi" "$unsigned_root/usr/lib/shim/fbx64.efi"
fi
# A second run, or one after an interrupted run, leaves a file that already
# carries its signature as it is instead of adding the signature again.
mkdir -p "$WORK/again-root/usr/lib"
cp -a "$unsigned_root/usr/lib/shim" "$WORK/again-root/usr/lib/shim"
check "attach-tree after one file was done by hand (an interrupted run)" bash -c "
    '$REPROSIGN' attach '$sigs/usr/lib/shim/fbx64.efi.sig' '$WORK/again-root/usr/lib/shim/fbx64.efi' &&
    '$REPROSIGN' attach-tree --quiet --signatures '$sigs' --root '$WORK/again-root'"
check "... leaves one signature on each file" bash -c "
    for f in fbx64 mmx64; do
        [ \$('$REPROSIGN' list '$WORK/again-root/usr/lib/shim/'\$f.efi | grep -c '^signature') = 1 ] || exit 1
        sbverify --cert '$WORK/db.crt' '$WORK/again-root/usr/lib/shim/'\$f.efi >/dev/null || exit 1
    done"
cp -a "$WORK/again-root" "$WORK/again-root.1"
check "a second run over a signed tree" "$REPROSIGN" attach-tree --quiet --signatures "$sigs" --root "$WORK/again-root"
check "... changes nothing" diff -r "$WORK/again-root" "$WORK/again-root.1"
check "... and into an output root writes the files as they are" bash -c "
    '$REPROSIGN' attach-tree --quiet --signatures '$sigs' --root '$WORK/again-root' --output '$WORK/again-out' &&
    cmp '$WORK/again-out/usr/lib/shim/fbx64.efi' '$WORK/again-root/usr/lib/shim/fbx64.efi'"
refuses "attach-tree with a root that does not exist" "" \
    "$REPROSIGN" attach-tree --signatures "$sigs" --root "$WORK/no-such-root"
finish

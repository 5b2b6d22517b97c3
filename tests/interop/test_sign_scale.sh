#!/bin/bash
# sign-template over a template of 9,500 files: what a user sees, whatever
# sign-template does inside (a run this size spans several of any window a
# few thousand entries wide, so every case below crosses windows).
# - signatures.tar.gz holds PKG/PATH.sig for each listed file, in the
#   tarball's own order (checked against a reimplementation of
#   rs_tarball_path_cmp here: by bytes, where '/' ranks below every other
#   byte), with names placed to stress that order far apart in files.json;
# - manifest.json lists the files in files.json's order, one entry each;
# - .deb packages give the same bytes as unpacked roots; a second run
#   gives the same bytes;
# - refusals whose two halves lie thousands of entries apart, or at the
#   very end, fail the whole run and leave nothing behind.
# The files are eight small real kernel modules, their signatures
# stripped, hard linked in turn under every name, so the trees cost no
# disk and a signature put under another file's name shows.
. "$TESTS_DIR/lib.sh"
need_fixtures kernel
need_tool python3; need_tool dpkg-deb; need_tool modinfo

mkdir -p "$WORK/mod"
n=0
while read -r module; do
    "$REPROSIGN" strip "$module" --output "$WORK/mod/$n.ko" || fail "strip $module"
    n=$((n + 1))
done < <(find "$(readlink -f "$FIXTURES/kernel")/lib/modules" -name '*.ko' -size -16k | sort | head -n 8)
[ "$n" -eq 8 ] || skip "fewer than 8 small modules in the kernel fixture"
for f in "$WORK"/mod/*.ko; do echo "$(stat -c %i "$f") $("$REPROSIGN" digest "$f")"; done >"$WORK/digests"
make_key db
export SOURCE_DATE_EPOCH=1700000000
sign_template() { "$REPROSIGN" sign-template --quiet --key "$WORK/db.key" --cert "$WORK/db.crt" "$@"; }
mkdir -p "$WORK/pkgs/mods" "$WORK/pkgs/mods-extra" "$WORK/outside" "$WORK/refused"
ln "$WORK/mod/0.ko" "$WORK/outside/x.ko"

# The trees and files.json. Two packages: "mods-extra", listed first, and
# "mods", whose names sort the other way in the tarball ('/' ranks below
# '-'). Each lists its files shuffled (fixed seed), with the names that
# stress the tarball's order split between its first and last entries.
# Modules 0 to 6 take turns under the names; kernel/link is a symlink to
# kernel/real, which holds module 7.
python3 - "$WORK" <<'PY'
import json, os, random, sys
work = sys.argv[1]
K = "lib/modules/6.1.0-x/kernel/"
STRESS = ["a.ko", "a-b.ko", "a/b.ko", "a0.ko", "a!.ko", "a b.ko", "A.ko", "z.ko", "\u00e9.ko",
          "a.ko.a.ko", "a.ko-b.ko", "a.ko.s/b.ko", "a.ko.sig.ko", "a.ko.sia.ko", "a.ko.sih/c.ko",
          "a-/c.ko", "a./c.ko", "a0/c.ko", "a/b-c.ko", "a/b/c.ko", "a/b.ko.d/e.ko"]
rng = random.Random(20261205)
tree = {}
for pkg, n in (("mods-extra", 800), ("mods", 8700 - 2 * len(STRESS) - 1)):
    files = [K + "d%02d/m%d.ko" % (i % 37, i) for i in range(n)]
    rng.shuffle(files)
    stress = [K + "stress/" + s for s in STRESS] + [K + "stress-" + s for s in STRESS]
    rng.shuffle(stress)
    half = len(stress) // 2
    files = stress[:half] + files + stress[half:]
    if pkg == "mods":
        files.insert(len(files) // 2, K + "link/x.ko")
    tree[pkg] = files
    root = os.path.join(work, "pkgs", pkg)
    for i, f in enumerate(files):
        if f.startswith(K + "link/"):
            continue
        os.makedirs(os.path.join(root, os.path.dirname(f)), exist_ok=True)
        os.link(os.path.join(work, "mod", "%d.ko" % (i % 7)), os.path.join(root, f))
mods = os.path.join(work, "pkgs", "mods", K)
os.makedirs(mods + "real")
os.link(os.path.join(work, "mod", "7.ko"), mods + "real/x.ko")
os.symlink("real", mods + "link")
# For the refusals: a file beside a directory named after its signature.
os.makedirs(mods + "sigdir/x.ko.sig")
os.link(os.path.join(work, "mod", "0.ko"), mods + "sigdir/x.ko")
os.link(os.path.join(work, "mod", "1.ko"), mods + "sigdir/x.ko.sig/y.ko")
doc = {"packages": {p: {"trusted_certs": [], "files": [{"sig_type": "linux-module", "file": f} for f in fs]}
                    for p, fs in tree.items()}}
json.dump(doc, open(os.path.join(work, "files.json"), "w"), indent=2, ensure_ascii=False)
PY
total=$(python3 -c "import json,sys; print(sum(len(p['files']) for p in json.load(open(sys.argv[1]))['packages'].values()))" "$WORK/files.json")

# The checks of one run's outputs, reading files.json for what is expected.
cat >"$WORK/outputs.py" <<'PY'
import hashlib, io, json, os, sys, tarfile
what, files_json, out = sys.argv[1:4]
doc = json.load(open(files_json))
listed = [(p, f["file"]) for p, v in doc["packages"].items() for f in v["files"]]

def tar_key(name):
    # rs_tarball_path_cmp: bytes compared unsigned, where '/' ranks below
    # any other byte and the end of a name below '/'.
    return [1 if b == 0x2F else 2 + b for b in name.encode()]

def expected_members():
    """Every PKG/PATH.sig in order, each after the directories above it
    that the one before did not share."""
    members, last = [], None
    for name in sorted(("%s/%s.sig" % pf for pf in listed), key=tar_key):
        for i, c in enumerate(name):
            if c == "/" and not (last and last[:i] == name[:i] and last[i:i + 1] == "/"):
                members.append((name[:i], "dir"))
        members.append((name, "file"))
        last = name
    return members

def tar_members():
    with tarfile.open(os.path.join(out, "signatures.tar.gz"), "r:gz") as t:
        for m in t:
            yield m, (t.extractfile(m).read() if m.isfile() else None)

def fail(msg):
    sys.exit(msg)

if what == "tar-order":
    got = [(m.name, "dir" if m.isdir() else "file" if m.isfile() else "other") for m, _ in tar_members()]
    want = expected_members()
    if got != want:
        i = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        fail("%d members, %d expected; first difference at %d: %r, expected %r"
             % (len(got), len(want), i, got[i:i + 3], want[i:i + 3]))
elif what == "tar-headers":
    for m, _ in tar_members():
        if (m.uid, m.gid, m.uname, m.gname, m.mtime) != (0, 0, "root", "root", int(os.environ["SOURCE_DATE_EPOCH"])):
            fail("%s: %r" % (m.name, (m.uid, m.gid, m.uname, m.gname, m.mtime)))
elif what == "tar-bytes":
    sigdir, seen = os.path.join(out, "signatures"), set()
    for m, data in tar_members():
        if data is None:
            continue
        seen.add(m.name)
        on_disk = open(os.path.join(sigdir, m.name), "rb").read()
        if not data or data != on_disk:
            fail("%s: %d bytes in the tarball, %d in signatures/" % (m.name, len(data), len(on_disk)))
    tree = {os.path.relpath(os.path.join(d, f), sigdir) for d, _, fs in os.walk(sigdir) for f in fs}
    if tree != seen:
        fail("signatures/ and the tarball differ: %r" % sorted(tree ^ seen)[:5])
elif what == "manifest-order":
    m = json.load(open(os.path.join(out, "manifest.json")))
    got = [(e["package"], e["path"]) for e in m["files"]]
    if list(m) != ["files"]:
        fail("members %r" % list(m))
    if got != listed:
        i = next((i for i, (a, b) in enumerate(zip(got, listed)) if a != b), min(len(got), len(listed)))
        fail("%d entries, %d listed; first difference at %d: %r, listed %r"
             % (len(got), len(listed), i, got[i:i + 2], listed[i:i + 2]))
elif what == "manifest-entries":
    # Each entry: its .sig's SHA-256, and the digest `reprosign digest`
    # gives for the module found under its path (through symlinks).
    # Signing is deterministic: one module, one signature, and eight
    # modules, eight signatures.
    digests, pkgs, fpr = sys.argv[4:7]
    by_inode = dict(line.split() for line in open(digests))
    sigs = {}
    for e in json.load(open(os.path.join(out, "manifest.json")))["files"]:
        sig = open(os.path.join(out, "signatures", e["package"], e["path"] + ".sig"), "rb").read()
        want = "sha256:" + by_inode[str(os.stat(os.path.join(pkgs, e["package"], e["path"])).st_ino)]
        if e["signature_sha256"] != hashlib.sha256(sig).hexdigest():
            fail("%s/%s: signature_sha256 %s is not its .sig's" % (e["package"], e["path"], e["signature_sha256"]))
        if (e["sig_type"], e["signed_digest"], e["tbs_digest"], e["signer_fingerprint"]) != \
                ("linux-module", want, want, fpr):
            fail("%s/%s: %r, expected signed_digest %s" % (e["package"], e["path"], e, want))
        sigs.setdefault(want, set()).add(e["signature_sha256"])
    if len(sigs) != 8 or any(len(v) != 1 for v in sigs.values()) or len(set().union(*sigs.values())) != 8:
        fail("signatures by module digest: %r" % sigs)
elif what == "sample":
    # 20 files: the first and last listed, the first and last in the
    # tarball, the symlinked one, and others spread over the list.
    by_tar = sorted(listed, key=lambda pf: tar_key("%s/%s.sig" % pf))
    picks = [listed[0], listed[-1], by_tar[0], by_tar[-1]]
    picks += [pf for pf in listed if pf[1].endswith("/link/x.ko")]
    picks += [listed[i * len(listed) // 16] for i in range(1, 16)]
    for p, f in dict.fromkeys(picks):
        print("%s\t%s" % (p, f))
else:
    fail("unknown check " + what)
PY
outputs() { python3 "$WORK/outputs.py" "$1" "${3:-$WORK/files.json}" "$2" "${@:4}"; }

# ---- 1. unpacked roots ----
check "sign-template over $total files in two unpacked roots" \
    sign_template "$WORK/files.json" --packages "$WORK/pkgs" --output "$WORK/out"
check "signatures.tar.gz: one PKG/PATH.sig per listed file, with its directories, in the tarball's order" \
    outputs tar-order "$WORK/out"
check "... every member root-owned, at SOURCE_DATE_EPOCH" outputs tar-headers "$WORK/out"
check "... each signature the bytes of the one in signatures/, and no other there" outputs tar-bytes "$WORK/out"
check "manifest.json: one entry per listed file, in files.json's order" outputs manifest-order "$WORK/out"
fpr=$(openssl x509 -in "$WORK/db.crt" -outform DER | sha256sum | cut -d' ' -f1)
check "... each with its .sig's SHA-256, its type, its file's digest (the symlinked one: its target's), the signer" \
    outputs manifest-entries "$WORK/out" "" "$WORK/digests" "$WORK/pkgs" "$fpr"
link_sig=$WORK/out/signatures/mods/lib/modules/6.1.0-x/kernel/link/x.ko.sig
check "a path through a symlink to a directory inside the root is signed with its target's bytes" bash -c "
    '$REPROSIGN' attach --cert '$WORK/db.crt' '$link_sig' '$WORK/mod/7.ko' --output '$WORK/7.signed' &&
    '$REPROSIGN' verify --cert '$WORK/db.crt' '$WORK/7.signed' >/dev/null"
check "attach-tree over each whole root" bash -c "
    for p in mods mods-extra; do
        '$REPROSIGN' attach-tree --quiet --signatures '$WORK/out/signatures/'\$p --root '$WORK/pkgs/'\$p \
            --output '$WORK/attached/'\$p --cert '$WORK/db.crt' || exit 1
    done"
outputs sample "$WORK/out" >"$WORK/sample"
bad=0
while IFS=$'\t' read -r p f; do
    "$REPROSIGN" verify --cert "$WORK/db.crt" "$WORK/attached/$p/$f" >/dev/null 2>&1 || { bad=$((bad + 1)); echo "fails: $p/$f"; }
done <"$WORK/sample"
check "$(wc -l <"$WORK/sample") signed modules, first and last in both orders, verify with the certificate" test "$bad" -eq 0
check "... and modinfo reads their signer" bash -c "
    [ \"\$(modinfo -F signer '$WORK/attached/$(head -n 1 "$WORK/sample" | tr '\t' /)')\" = 'reprosign test db' ]"
rm -rf "$WORK/attached"

# ---- 2. the same packages as .deb files ----
# A bare files.json names no template and the manifest no package source:
# the outputs are the same bytes however the packages come.
mkdir -p "$WORK/debs"
for p in mods mods-extra; do
    cp -al "$WORK/pkgs/$p" "$WORK/deb-$p"
    mkdir "$WORK/deb-$p/DEBIAN"
    printf 'Package: %s\nVersion: 1.0\nArchitecture: amd64\nMaintainer: Test <test@example.org>\nDescription: %s\n many modules\n' \
        "$p" "$p" >"$WORK/deb-$p/DEBIAN/control"
    dpkg-deb --build --root-owner-group -Zgzip -z1 "$WORK/deb-$p" "$WORK/debs/${p}_1.0_amd64.deb" >/dev/null ||
        fail "dpkg-deb --build $p"
    rm -rf "$WORK/deb-$p"
done
check "sign-template over the same files in two .deb packages" \
    sign_template "$WORK/files.json" --packages "$WORK/debs" --output "$WORK/out-deb"
check "... the same signatures.tar.gz" same_bytes "$WORK/out-deb/signatures.tar.gz" "$WORK/out/signatures.tar.gz"
check "... the same manifest.json" same_bytes "$WORK/out-deb/manifest.json" "$WORK/out/manifest.json"
check "... the same signatures/ tree" diff -r "$WORK/out-deb/signatures" "$WORK/out/signatures"
rm -rf "$WORK/out-deb" "$WORK/debs"

# ---- 3. the same run again, one file at a time ----
check "a second run, --jobs 1" \
    sign_template "$WORK/files.json" --packages "$WORK/pkgs" --output "$WORK/out2" --jobs 1
check "... the same signatures.tar.gz" same_bytes "$WORK/out2/signatures.tar.gz" "$WORK/out/signatures.tar.gz"
check "... the same manifest.json" same_bytes "$WORK/out2/manifest.json" "$WORK/out/manifest.json"
check "... the same signatures/ tree" diff -r "$WORK/out2/signatures" "$WORK/out/signatures"
rm -rf "$WORK/out2"

# ---- 4. refusals: each fails the whole run, leaving nothing ----
kdir=lib/modules/6.1.0-x/kernel
ln -s "$WORK/outside" "$WORK/pkgs/mods/$kdir/esc-abs"
ln -s ../../../../../../outside "$WORK/pkgs/mods/$kdir/esc-rel"
check "the relative symlink does reach the directory outside the root" test -f "$WORK/pkgs/mods/$kdir/esc-rel/x.ko"
# variant NAME PYTHON: files.json with mods' list (fs) changed by PYTHON.
variant() {
    python3 - "$WORK/files.json" "$WORK/$1.json" "$kdir" "$2" <<'PY'
import json, sys
src, dst, k, change = sys.argv[1:5]
doc = json.load(open(src))
fs = doc["packages"]["mods"]["files"]
def entry(path, sig_type="linux-module"):
    return {"sig_type": sig_type, "file": k + "/" + path}
exec(change)
json.dump(doc, open(dst, "w"), indent=2, ensure_ascii=False)
PY
}
# refused NAME DESCRIPTION MESSAGE: the run on NAME.json exits 1 with
# one line holding MESSAGE and leaves nothing where its output would go.
refused() {
    refuses "$2" "$WORK/refused/$1" sign_template "$WORK/$1.json" --packages "$WORK/pkgs" --output "$WORK/refused/$1"
    check "... saying: $3" grep -qF -- "$3" "$WORK/.err"
    check "... leaving nothing beside the output (no .partial- directory)" \
        bash -c "[ -z \"\$(ls -A '$WORK/refused')\" ] && ! compgen -G '$WORK/.*.partial-*' >/dev/null"
}
extra=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['packages']['mods-extra']['files']))" "$WORK/files.json")
twice=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['packages']['mods']['files'][30]['file'])" "$WORK/files.json")
variant twice 'fs.insert(len(fs) - 20, dict(fs[30]))'
refused twice "a path listed twice, $((total - 20 - extra - 30)) entries apart" "package mods: $twice is listed twice"
variant sigdir-late 'fs.insert(5, entry("sigdir/x.ko")); fs.insert(len(fs) - 5, entry("sigdir/x.ko.sig/y.ko"))'
refused sigdir-late "x.ko listed early, x.ko.sig/y.ko late" \
    "package mods: $kdir/sigdir/x.ko.sig would be both the signature of $kdir/sigdir/x.ko and a directory above $kdir/sigdir/x.ko.sig/y.ko's"
variant sigdir-early 'fs.insert(5, entry("sigdir/x.ko.sig/y.ko")); fs.insert(len(fs) - 5, entry("sigdir/x.ko"))'
refused sigdir-early "x.ko.sig/y.ko listed early, x.ko late" \
    "package mods: $kdir/sigdir/x.ko.sig would be both the signature of $kdir/sigdir/x.ko and a directory above"
variant missing 'fs.append(entry("d00/missing.ko"))'
refused missing "a file that does not exist, listed last" "$kdir/d00/missing.ko: not found in"
wrong=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['packages']['mods']['files'][-500]['file'])" "$WORK/files.json")
variant wrongtype 'fs[-500]["sig_type"] = "efi"'
refused wrongtype "a module declared efi, 500 entries from the end" "package mods: $wrong: declared efi, but the file is a"
variant esc-abs 'fs.insert(len(fs) - 100, entry("esc-abs/x.ko"))'
refused esc-abs "a path through an absolute symlink out of the root" \
    "$kdir/esc-abs/x.ko: symlink $kdir/esc-abs -> $WORK/outside points outside the package"
variant esc-rel 'fs.insert(len(fs) - 100, entry("esc-rel/x.ko"))'
refused esc-rel "a path through a relative symlink out of the root" \
    "$kdir/esc-rel/x.ko resolves outside the package (through '..')"
finish

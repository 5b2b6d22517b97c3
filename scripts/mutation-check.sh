#!/bin/bash
# The mutation check: proves that the network-free test suite (what the
# Debian package build runs, ctest -LE 'network|vm') catches a break of each
# claim in tests/mutations/. Each *.mut file there breaks one claim (a
# security rule, a trust rule, a byte format) with one small edit of the
# source, and names the tests that must then fail:
#
#   claim: one line: the rule the mutation breaks
#   file: the source file, relative to the top of the tree
#   tests: a ctest regular expression (-R) naming the tests that catch it
#   @@ original
#   the exact text of the source, found exactly once in the file
#   @@ mutated
#   the text that replaces it
#
# (each block is the lines up to the next marker or the end, the newline
# that ends its last line left out: an empty mutated block after an
# original one that ends in an empty line deletes whole lines).
#
# The tree is copied once into DIR/src (tracked and new files of the work
# tree, or --rev's commit) and built in DIR/build; each mutation is applied
# there, rebuilt incrementally (only the targets its tests run), its tests
# run, and the file put back. The unmutated copy must first pass every test
# the mutations name. A mutation whose original text is gone no longer
# applies: the list must follow the source, so that is a failure too.
#
#   bash scripts/mutation-check.sh [--rev REV] [--dir DIR] [NAME...]
#
# NAME selects mutations by file name (without .mut); DIR defaults to
# build-mutation/ (MUTATION_DIR); MUTATION_JOBS (2) builds and tests in
# parallel. Exits 0 only when every mutation was caught.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
rev= dir=${MUTATION_DIR:-$top/build-mutation}
jobs=${MUTATION_JOBS:-2}
while [ $# -gt 0 ]; do
    case $1 in
    --rev) rev=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    -h | --help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
    --*) echo "mutation-check: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
case $dir in /*) ;; *) dir=$top/$dir ;; esac
src=$dir/src bld=$dir/build
mkdir -p "$dir"
start=$(date +%s)
# Every test that a mutation names must run: a skip would hide the catch.
export REPROSIGN_REQUIRE_ALL=1

if [ $# -gt 0 ]; then
    muts=()
    for n in "$@"; do muts+=("tests/mutations/${n%.mut}.mut"); done
else
    mapfile -t muts < <(ls tests/mutations/*.mut)
fi
[ ${#muts[@]} -gt 0 ] || { echo "mutation-check: no mutations in tests/mutations/" >&2; exit 2; }

# field FILE NAME: a header line's value.
field() { sed -n "s/^$2: //p" "$1" | head -n 1; }

# The copy: files whose contents are unchanged keep their times, so the
# build directory of the last run rebuilds only what changed since (and a
# file that an interrupted run left mutated is put back).
echo "== copying the tree into $src${rev:+ (at $rev)}"
list=$dir/files.list stage=$dir/stage
rm -rf "$stage" && mkdir -p "$stage" "$src"
if [ -n "$rev" ]; then
    git archive "$rev" | tar -x -C "$stage" || exit 2
    (cd "$stage" && find . -type f -o -type l | sed 's|^\./||') >"$list"
else
    git ls-files -co --exclude-standard >"$list"
    tr '\n' '\0' <"$list" | xargs -0 cp -P --parents -t "$stage" 2>/dev/null
fi
python3 - "$stage" "$src" "$list" <<'PY' || exit 2
import filecmp, os, shutil, sys
stage, src, listing = sys.argv[1:4]
want = {l for l in open(listing).read().split("\n") if l and os.path.lexists(os.path.join(stage, l))}
for root, dirs, files in os.walk(src):
    for f in files:
        rel = os.path.relpath(os.path.join(root, f), src)
        if rel not in want:
            os.unlink(os.path.join(src, rel))
for rel in want:
    a, b = os.path.join(stage, rel), os.path.join(src, rel)
    if os.path.islink(a) or os.path.islink(b) or not os.path.isfile(b) or not filecmp.cmp(a, b, shallow=False):
        os.makedirs(os.path.dirname(b), exist_ok=True)
        if os.path.lexists(b):
            os.unlink(b)
        # A new time (not the commit's), so make rebuilds from it.
        shutil.copy(a, b, follow_symlinks=False)
PY
rm -rf "$stage"

# apply FILE.mut: the edit, made in the copy (the file kept in $dir/saved
# to put back); exits 3 when the original text is not there exactly once.
apply() {
    cp "$src/$(field "$1" file)" "$dir/saved" || return 2
    python3 - "$1" "$src" <<'PY'
import sys
mut, src = sys.argv[1:3]
text = open(mut).read()
head, _, rest = text.partition("\n@@ original\n")
orig, sep, new = rest.partition("\n@@ mutated\n")
if not sep:
    sys.exit("%s: no '@@ original' and '@@ mutated' blocks" % mut)
path = next(l[6:] for l in head.split("\n") if l.startswith("file: "))
new = new[:-1] if new.endswith("\n") else new
body = open(src + "/" + path).read()
if body.count(orig) != 1:
    print("%s holds the original text %d times, not once" % (path, body.count(orig)))
    sys.exit(3)
open(src + "/" + path, "w").write(body.replace(orig, new))
PY
}
# revert FILE.mut: the file as it was, with a new time, so that make
# rebuilds what was built from the mutated text.
revert() { cp "$dir/saved" "$src/$(field "$1" file)"; }

# targets REGEX: the build targets the selected tests run: the binary,
# which the script tests drive, and each test's own executable.
targets() {
    echo reprosign
    ctest --test-dir "$bld" --show-only=json-v1 -LE 'network|vm' -R "$1" | python3 -c '
import json, os, sys
build = sys.argv[1] + "/"
for t in json.load(sys.stdin)["tests"]:
    exe = (t.get("command") or [""])[0]
    if exe.startswith(build):
        print(os.path.basename(exe))' "$bld"
}
count_tests() { ctest --test-dir "$bld" -N -LE 'network|vm' -R "$1" | grep -c '^ *Test *#'; }

build() {  # build TARGET...: quietly, its log in $dir/build.log
    local t args=()
    for t in "$@"; do args+=(--target "$t"); done
    cmake --build "$bld" -j"$jobs" "${args[@]}" >"$dir/build.log" 2>&1
}

echo "== configuring and building $bld"
cmake -S "$src" -B "$bld" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$dir/configure.log" 2>&1 ||
    { cat "$dir/configure.log"; exit 2; }
build || { tail -n 30 "$dir/build.log"; echo "mutation-check: the unmutated tree does not build"; exit 2; }

passed=0 failed=0 regexes=()
for m in "${muts[@]}"; do
    [ -f "$m" ] || { echo "mutation-check: $m: no such mutation" >&2; exit 2; }
    re=$(field "$m" tests)
    for key in claim file tests; do
        [ -n "$(field "$m" $key)" ] || { echo "mutation-check: $m: no '$key:' line" >&2; exit 2; }
    done
    [ "$(count_tests "$re")" -gt 0 ] || { echo "mutation-check: $m: '$re' names no network-free test" >&2; exit 2; }
    regexes+=("$re")
done

echo "== the unmutated tree must pass every test named (${#muts[@]} mutations)"
union=$(IFS='|'; echo "${regexes[*]}")
if ! ctest --test-dir "$bld" -LE 'network|vm' -R "$union" -j"$jobs" --timeout 900 >"$dir/baseline.log" 2>&1; then
    grep -E 'Failed|Not Run|\*\*\*' "$dir/baseline.log" | tail -n 20
    echo "mutation-check: the unmutated tree fails its tests ($dir/baseline.log)"
    exit 1
fi
grep -E 'tests passed' "$dir/baseline.log"

for m in "${muts[@]}"; do
    name=$(basename "$m" .mut) re=$(field "$m" tests) t0=$(date +%s)
    if ! out=$(apply "$m"); then
        echo "STALE     $name: $out"
        failed=$((failed + 1)); continue
    fi
    mapfile -t tg < <(targets "$re")
    if ! build "${tg[@]}"; then
        echo "NO BUILD  $name: the mutated tree does not compile ($dir/$name.log)"
        cp "$dir/build.log" "$dir/$name.log"
        failed=$((failed + 1))
    elif ctest --test-dir "$bld" -LE 'network|vm' -R "$re" -j"$jobs" --timeout 900 >"$dir/$name.log" 2>&1; then
        echo "SURVIVED  $name: $(field "$m" claim) (tests: $re; $dir/$name.log)"
        failed=$((failed + 1))
    else
        caught_by=$(sed -n 's/^.*Test *#[0-9]*: \([^ ]*\) .*\(Failed\|Timeout\|Exception\).*$/\1/p' "$dir/$name.log" | tr '\n' ' ')
        echo "caught    $name by ${caught_by:-?}($(($(date +%s) - t0)) s)"
        passed=$((passed + 1))
    fi
    revert "$m" || { echo "mutation-check: cannot undo $name" >&2; exit 2; }
done
echo "== ${#muts[@]} mutations in $(($(date +%s) - start)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

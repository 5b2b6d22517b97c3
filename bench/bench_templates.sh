#!/bin/bash
# sign-template on bookworm's real linux-image-amd64-signed-template with its
# three unsigned kernel packages read as .debs (25-70 MB each), against the
# loop Debian's signing service ran: dpkg-deb -x each package, then
# sbsign --detached each image files.json lists. In the same run, median of
# RUNS. sign-template is timed twice: with the template .deb (signatures,
# signatures.tar.gz, manifest and the -signed source package, which
# dpkg-source -b compresses) and with the bare files.json (the signatures,
# the loop's whole work). Peak RSS of each. RELEASE=forky takes forky's
# templates instead (fetch-fixtures.sh forky-templates), its kernel's
# linux-signed-amd64-template by default: three linux-binary-unsigned-*
# packages of 14 MB, each holding only its vmlinuz.unsigned.
#   [RELEASE=forky] bench/bench_templates.sh [BUILD_DIR] [RUNS] [TEMPLATE]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-3}
release=${RELEASE:-bookworm}
rs=$(pwd)/$build/reprosign
# Absolute, for the links made to it from the work directory.
fixtures=$(realpath -m -- "${FIXTURES:-build/fixtures}")
case $release in
bookworm) t=${3:-linux-image-amd64-signed-template} set=templates debs=$fixtures/debs ;;
forky) t=${3:-linux-signed-amd64-template} set=forky-templates debs=$fixtures/forky/debs ;;
*) echo "bench_templates: RELEASE is bookworm or forky" >&2; exit 2 ;;
esac
bash tests/fetch-fixtures.sh "$fixtures" "$set" >/dev/null
bench_dir=${BENCH_DIR:-$( [ -w /dev/shm ] && echo /dev/shm || echo /tmp )}
work=$(mktemp -d -p "$bench_dir")
trap 'rm -rf "$work"' EXIT
tdeb=$(bash tests/tools/newest-deb.sh "$debs" "$t")
bash tests/tools/template-files-json.sh "$tdeb" >"$work/files.json"
mkdir -p "$work/pkgs"
python3 -c 'import json,sys
for p, v in json.load(open(sys.argv[1]))["packages"].items():
    for f in v["files"]: print(p, f["file"])' "$work/files.json" >"$work/list"
for p in $(cut -d' ' -f1 "$work/list" | sort -u); do ln -s "$(bash tests/tools/newest-deb.sh "$debs" "$p")" "$work/pkgs/"; done
openssl req -new -x509 -newkey rsa:2048 -nodes -subj /CN=bench -keyout "$work/k.pem" -out "$work/c.pem" 2>/dev/null
export SOURCE_DATE_EPOCH=1700000000

# Times from bash's own clock: a `date` process per reading would add
# about a millisecond of fork and exec inside every interval.
export LC_NUMERIC=C   # EPOCHREALTIME's decimal point
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
sign_template() { "$rs" sign-template --quiet --key "$work/k.pem" --cert "$work/c.pem" "$@"; }
peer_loop() {   # what Debian's service did: unpack each package, sign each listed file
    local out=$1 p f
    for p in $(cut -d' ' -f1 "$work/list" | sort -u); do
        dpkg-deb -x "$work/pkgs/${p}"_*.deb "$out/x/$p"
    done
    while read -r p f; do
        mkdir -p "$out/sig/$p/$(dirname "$f")"
        sbsign --key "$work/k.pem" --cert "$work/c.pem" --detached "$out/x/$p/$f" --output "$out/sig/$p/$f.sig" >/dev/null 2>&1
    done <"$work/list"
}
peer_source() {   # and then the -signed source package, as it did: the template
    # unpacked, its source-template copied, the signatures put in, dpkg-source -b
    local out=$1 src
    dpkg-deb -x "$tdeb" "$out/t"
    src=$(echo "$out"/t/usr/share/code-signing/*/source-template)
    cp -a "$src" "$out/src" && mkdir -p "$out/src/debian/signatures" && cp -a "$out/sig/." "$out/src/debian/signatures/"
    (cd "$out" && dpkg-source -b src >/dev/null 2>&1)
}
: >"$work/full.t"; : >"$work/sigs.t"; : >"$work/peer.t"; : >"$work/peer_full.t"
for i in $(seq "$runs"); do
    rm -rf "$work/full" "$work/sigs" "$work/peer"
    t0=$EPOCHREALTIME; sign_template "$tdeb" --packages "$work/pkgs" --output "$work/full"; t1=$EPOCHREALTIME
    echo "$t1 - $t0" | bc >>"$work/full.t"
    t0=$EPOCHREALTIME; sign_template "$work/files.json" --packages "$work/pkgs" --output "$work/sigs"; t1=$EPOCHREALTIME
    echo "$t1 - $t0" | bc >>"$work/sigs.t"
    mkdir -p "$work/peer/x"
    t0=$EPOCHREALTIME; peer_loop "$work/peer"; t1=$EPOCHREALTIME; peer_source "$work/peer"; t2=$EPOCHREALTIME
    echo "$t1 - $t0" | bc >>"$work/peer.t"
    echo "$t2 - $t0" | bc >>"$work/peer_full.t"
    ls "$work"/peer/*.dsc >/dev/null || { echo "bench_templates: the loop made no source package" >&2; exit 1; }
done
full=$(median <"$work/full.t"); sigs=$(median <"$work/sigs.t"); peer=$(median <"$work/peer.t")
peer_full=$(median <"$work/peer_full.t")
rm -rf "$work/full" "$work/sigs"
peak_full=$( { /usr/bin/time -f %M "$rs" sign-template --quiet --key "$work/k.pem" --cert "$work/c.pem" "$tdeb" \
    --packages "$work/pkgs" --output "$work/full"; } 2>&1 | tail -n 1)
peak_sigs=$( { /usr/bin/time -f %M "$rs" sign-template --quiet --key "$work/k.pem" --cert "$work/c.pem" \
    "$work/files.json" --packages "$work/pkgs" --output "$work/sigs"; } 2>&1 | tail -n 1)
mb=$(du -cLm "$work"/pkgs/*.deb | tail -n 1 | cut -f1)
printf '%s: %d files in %d packages (%d MB of .debs), %d cores, median of %d runs, in %s\n' "$t" \
    "$(wc -l <"$work/list")" "$(ls "$work/pkgs" | wc -l)" "$mb" "$(nproc)" "$runs" "$bench_dir"
ratio() { echo "$1 / $2" | bc -l; }
printf '  %-52s %8.3f s\n' "loop: dpkg-deb -x each, sbsign --detached each" "$peer"
printf '  %-52s %8.3f s  %6.2fx the loop\n' "sign-template, bare files.json (signatures)" "$sigs" "$(ratio "$peer" "$sigs")"
printf '  %-52s %8.3f s\n' "loop, then the source package (dpkg-source -b)" "$peer_full"
printf '  %-52s %8.3f s  %6.2fx that loop\n' "sign-template, template .deb (+ source package)" "$full" \
    "$(ratio "$peer_full" "$full")"
printf '  %-52s %8d KiB\n' "peak RSS, bare files.json" "$peak_sigs"
printf '  %-52s %8d KiB\n' "peak RSS, template .deb (with dpkg-source, xz -6)" "$peak_full"

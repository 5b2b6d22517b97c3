#!/bin/bash
# sign-template on bookworm's real linux-image-amd64-signed-template with its
# three unsigned kernel packages read as .debs (25-70 MB each), against the
# loop Debian's signing service ran: dpkg-deb -x each package, then
# sbsign --detached each image files.json lists. In the same run, median of
# RUNS. sign-template is timed twice: with the template .deb (signatures,
# signatures.tar.gz, manifest and the -signed source package, which
# dpkg-source -b compresses) and with the bare files.json (the signatures,
# the loop's whole work). Peak RSS of each. Beside them, the bound: the CPU
# time xz's decoder needs to reach each package's last listed file, which no
# signer of these .debs can go under. RELEASE=forky takes forky's
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
# The bound: the CPU time of decoding each package's data.tar up to the
# end of the last file files.json lists from it (`xz -T1 -dc`'s user time,
# read with /usr/bin/time, its output cut by `head -c`), nothing extracted,
# hashed or signed. One stream is decoded on one core from its start, so no
# signer that reads the images out of these .debs with xz's decoder takes
# less wall time than the longest of them, nor than their sum over the
# cores. The loop's time over that caps the speed-up any signer can show.
decoder() {   # decoder DATA-MEMBER: the command that decompresses it
    case $1 in
    *.xz) echo "xz -T1 -dc" ;;
    *.zst) echo "zstd -dc" ;;
    *.gz) echo "gzip -dc" ;;
    *) echo "bench_templates: $1: not a data.tar compression this bench knows" >&2; return 1 ;;
    esac
}
: >"$work/prefixes"
for p in $(cut -d' ' -f1 "$work/list" | sort -u); do
    deb=$(readlink -f "$work/pkgs/${p}"_*.deb)
    member=$(ar t "$deb" | grep -m1 '^data\.tar')
    dec=$(decoder "$member")
    mapfile -t names < <(awk -v p="$p" '$1 == p {print "./" $2}' "$work/list")
    # tar -R gives each header's block; the file's data ends SIZE bytes
    # after it. tar stops at the last name (--occurrence), and its writers
    # then die of SIGPIPE, hence the `|| true`; the count is checked.
    end=$( { ar p "$deb" "$member" | $dec 2>/dev/null | tar -tvR --occurrence=1 -f - "${names[@]}"; } 2>/dev/null |
        awk '{n++; e = ($2 + 1) * 512 + $5; if (e > m) m = e} END {print n + 0, m + 0}') || true
    [ "${end%% *}" -eq "${#names[@]}" ] || { echo "bench_templates: $deb: the listed files are not all in $member" >&2; exit 1; }
    echo "$deb $member ${end#* } $dec" >>"$work/prefixes"
done
decode_bound() {   # the bound, in seconds
    local deb member end dec i=0
    while read -r deb member end dec; do
        # The decoder dies of SIGPIPE once head has its bytes: `|| true`.
        ar p "$deb" "$member" | /usr/bin/time -o "$work/u.$i" -f %U $dec 2>/dev/null | head -c "$end" >/dev/null || true
        i=$((i + 1))
    done <"$work/prefixes"
    # Whole decodes on C cores: no less than the longest, than the sum
    # over the cores, nor (with more decodes than cores) than the two
    # shortest of the C + 1 longest, which must share a core.
    for ((i = i - 1; i >= 0; i--)); do tail -n 1 "$work/u.$i"; done | sort -gr |
        awk -v c="$(nproc)" '{p[NR] = $1; s += $1}
            END {b = p[1]; if (s / c > b) b = s / c; if (NR > c && p[c] + p[c + 1] > b) b = p[c] + p[c + 1]; print b}'
}

: >"$work/full.t"; : >"$work/sigs.t"; : >"$work/peer.t"; : >"$work/peer_full.t"; : >"$work/bound.t"
for i in $(seq "$runs"); do
    rm -rf "$work/full" "$work/sigs" "$work/peer"
    t0=$EPOCHREALTIME; sign_template "$tdeb" --packages "$work/pkgs" --output "$work/full"; t1=$EPOCHREALTIME
    echo "$t1 - $t0" | bc >>"$work/full.t"
    t0=$EPOCHREALTIME; sign_template "$work/files.json" --packages "$work/pkgs" --output "$work/sigs"; t1=$EPOCHREALTIME
    echo "$t1 - $t0" | bc >>"$work/sigs.t"
    decode_bound >>"$work/bound.t"
    mkdir -p "$work/peer/x"
    t0=$EPOCHREALTIME; peer_loop "$work/peer"; t1=$EPOCHREALTIME; peer_source "$work/peer"; t2=$EPOCHREALTIME
    echo "$t1 - $t0" | bc >>"$work/peer.t"
    echo "$t2 - $t0" | bc >>"$work/peer_full.t"
    ls "$work"/peer/*.dsc >/dev/null || { echo "bench_templates: the loop made no source package" >&2; exit 1; }
done
full=$(median <"$work/full.t"); sigs=$(median <"$work/sigs.t"); peer=$(median <"$work/peer.t")
peer_full=$(median <"$work/peer_full.t"); bound=$(median <"$work/bound.t")
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
printf '  %-52s %8.3f s  %6.2fx the loop: the most a signer can show\n' "bound: CPU to decode each .deb to its last file" \
    "$bound" "$(ratio "$peer" "$bound")"
printf '  %-52s %8.2fx\n' "sign-template, bare files.json / that bound" "$(ratio "$sigs" "$bound")"
printf '  %-52s %8.3f s\n' "loop, then the source package (dpkg-source -b)" "$peer_full"
printf '  %-52s %8.3f s  %6.2fx that loop\n' "sign-template, template .deb (+ source package)" "$full" \
    "$(ratio "$peer_full" "$full")"
printf '  %-52s %8d KiB\n' "peak RSS, bare files.json" "$peak_sigs"
printf '  %-52s %8d KiB\n' "peak RSS, template .deb (with dpkg-source, xz -6)" "$peak_full"

#!/bin/bash
# sign-template over one kernel flavour (its vmlinuz and every module, with
# Debian's signatures stripped), against the per-file loop Debian's signing
# service used (sign-file -d per module, sbsign --detached for the kernel),
# in the same run; and the machine's floor: SHA-256 over the bytes at
# `openssl speed` rate plus one RSA-2048 signature per file, over the cores.
# Beside the floor, a bare signer (bench_sign_bare.c): read, hash, sign and
# write each file on every core, and nothing else, the least any program
# doing this job pays on this machine.
# Also attach-tree over the same tree against `cp -r`, and peak memory.
#   bench/bench_pipeline.sh [BUILD_DIR] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-3}
rs=$(pwd)/$build/reprosign
signfile=/usr/lib/linux-kbuild-6.1/scripts/sign-file
bare=$(pwd)/$build/bench_sign_bare
[ -x "$rs" ] && [ -x "$bare" ] || { echo "bench_pipeline: build $rs and $bare first" >&2; exit 1; }
# Absolute, for the links made to it from the work directory.
fixtures=$(realpath -m -- "${FIXTURES:-build/fixtures}")
# Outputs go to tmpfs when there is one (BENCH_DIR overrides): the floor
# counts hashing and signing, not the file system creating 2000 inodes.
bench_dir=${BENCH_DIR:-$( [ -w /dev/shm ] && echo /dev/shm || echo /tmp )}
work=$(mktemp -d -p "$bench_dir")
trap 'rm -rf "$work"' EXIT

. bench/kernel_tree.sh
kernel_tree "$rs" "$fixtures" "$work"
nfiles=$(wc -l <"$work/files")
bytes=$(cd "$work/pkgs/$pkg" && cat $(cat "$work/files") | wc -c)
openssl req -new -x509 -newkey rsa:2048 -nodes -subj /CN=bench -keyout "$work/k.pem" -out "$work/c.pem" 2>/dev/null
cores=$(nproc)

# Times from bash's own clock: a `date` process per reading would add
# about a millisecond of fork and exec inside every interval.
export LC_NUMERIC=C   # EPOCHREALTIME's decimal point
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# The minimal per-file loop: sign-file -d writes MODULE.p7s beside each
# module, sbsign --detached the image's; no copying or renaming per file,
# so the ratio is honest. The .p7s files are removed outside the timing.
peer_one() {   # peer_one OUT FILE
    if [[ $2 == *vmlinuz* ]]; then
        sbsign --key "$work/k.pem" --cert "$work/c.pem" --detached "$work/pkgs/$pkg/$2" \
            --output "$1/$(basename "$2").sig" >/dev/null 2>&1
    else
        "$signfile" -d sha256 "$work/k.pem" "$work/c.pem" "$work/pkgs/$pkg/$2"
    fi
}
peer_loop() {
    mkdir -p "$1"
    while read -r f; do peer_one "$1" "$f"; done <"$work/files"
}
# The same over the machine's cores: xargs -P runs sign-file itself (no
# shell per file), the image signed beside it.
peer_parallel() {
    mkdir -p "$1"
    grep vmlinuz "$work/files" | while read -r f; do peer_one "$1" "$f"; done &
    grep -v vmlinuz "$work/files" | sed "s|^|$work/pkgs/$pkg/|" |
        xargs -P "$cores" -n 1 "$signfile" -d sha256 "$work/k.pem" "$work/c.pem"
    wait
}
peer_clean() { find "$work/pkgs/$pkg" -name '*.p7s' -delete; }

# The floor, measured now on this machine: SHA-256 and RSA-2048 at one
# process's `openssl speed` rates, over the cores. Beside it, the same work
# at `openssl speed -multi` rates (every core at once), which is what the
# cores deliver together: on a VM, often less than one core's rate times
# the cores.
speed_sha() { openssl speed "$@" -evp sha256 -bytes 16384 -seconds 1 2>/dev/null | awk '/^sha256/ {v=$NF; sub("k","",v); printf "%.0f\n", v*1000}'; }
speed_rsa() { openssl speed "$@" -seconds 1 rsa2048 2>/dev/null | awk '/^rsa 2048/ {print $6}'; }
floor_now() {
    local sha rsa sha_all rsa_all
    sha=$(speed_sha); rsa=$(speed_rsa)
    sha_all=$(speed_sha -multi "$cores"); rsa_all=$(speed_rsa -multi "$cores")
    echo "$(echo "($bytes / $sha + $nfiles / $rsa) / $cores" | bc -l) $sha $rsa" \
        "$(echo "$bytes / $sha_all + $nfiles / $rsa_all" | bc -l)"
}

# What the job must do beyond that floor, timed with standard tools in
# the same run: read every input byte (`cat` to /dev/null), create the
# signature files (`cp -r` of signatures/) and compress the tarball
# (`gzip -1` of its tar). Over the cores, like the floor, and added to it:
# no signer can go below that sum.
mapfile -t inputs < <(sed "s|^|$work/pkgs/$pkg/|" "$work/files")
printf '%s\n' "${inputs[@]}" >"$work/inputs"
# Each part is the fastest of 3 tries: the bound errs low, not high.
fastest() {   # fastest COMMAND...: the least wall time of 3 runs
    local best= t0 t1 i
    for i in 1 2 3; do
        rm -rf "$work/sigs-copy"
        t0=$EPOCHREALTIME; "$@"; t1=$EPOCHREALTIME
        best=$(echo "$t1 - $t0" | bc | awk -v b="$best" '{print (b == "" || $1 < b) ? $1 : b}')
    done
    rm -rf "$work/sigs-copy"
    echo "$best"
}
read_inputs() { cat "${inputs[@]}" >/dev/null; }
copy_signatures() { cp -r "$1/signatures" "$work/sigs-copy"; }
compress_tar() { gzip -1 -c "$work/sigs.tar" >/dev/null; }
io_now() {   # io_now OUT
    local a b c
    gzip -dc "$1/signatures.tar.gz" >"$work/sigs.tar"
    a=$(fastest read_inputs)
    b=$(fastest copy_signatures "$1")
    c=$(fastest compress_tar)
    rm -f "$work/sigs.tar"
    echo "$(echo "($a + $b + $c) / $cores" | bc -l) $a $b $c"
}

# This VM's RSA speed drifts by a third from one minute to the next, so
# every sign-template run is paired with a floor measured right after it,
# and the ratio reported is the median of the runs' own ratios.
: >"$work/rs.t"; : >"$work/peer.t"; : >"$work/par.t"; : >"$work/floor.t"; : >"$work/ratio.t"; : >"$work/ratio_all.t"
: >"$work/io.t"; : >"$work/ratio_io.t"; : >"$work/bare.t"; : >"$work/ratio_bare.t"; : >"$work/bare_floor.t"
for i in $(seq "$runs"); do
    rm -rf "$work/out" "$work/peer"
    t0=$EPOCHREALTIME; "$rs" sign-template --quiet "$work/files.json" --packages "$work/pkgs" --key "$work/k.pem" \
        --cert "$work/c.pem" --output "$work/out"; t1=$EPOCHREALTIME
    t=$(echo "$t1 - $t0" | bc)
    read -r f sha rsa f_all <<<"$(floor_now)"
    echo "$t" >>"$work/rs.t"
    echo "$f $sha $rsa $f_all" >>"$work/floor.t"
    echo "$t / $f" | bc -l >>"$work/ratio.t"
    echo "$t / $f_all" | bc -l >>"$work/ratio_all.t"
    rm -rf "$work/bare"; mkdir "$work/bare"
    t0=$EPOCHREALTIME; "$bare" "$work/k.pem" "$work/inputs" "$work/bare" "$cores" >/dev/null; t1=$EPOCHREALTIME
    tb=$(echo "$t1 - $t0" | bc)
    [ "$(find "$work/bare" -name '*.sig' | wc -l)" -eq "$nfiles" ] || { echo "the bare signer signed too little" >&2; exit 1; }
    rm -rf "$work/bare"
    echo "$tb" >>"$work/bare.t"
    echo "$t / $tb" | bc -l >>"$work/ratio_bare.t"
    echo "$tb / $f" | bc -l >>"$work/bare_floor.t"
    read -r io io_cat io_cp io_gz <<<"$(io_now "$work/out")"
    echo "$io $io_cat $io_cp $io_gz" >>"$work/io.t"
    echo "$t / ($f + $io)" | bc -l >>"$work/ratio_io.t"
    t0=$EPOCHREALTIME; peer_loop "$work/peer"; t1=$EPOCHREALTIME
    echo "$t1 - $t0" | bc >>"$work/peer.t"
    [ "$(find "$work/pkgs/$pkg" -name '*.p7s' | wc -l)" -eq "$((nfiles - 1))" ] || { echo "the loop signed too little" >&2; exit 1; }
    peer_clean; rm -rf "$work/peer"
    t0=$EPOCHREALTIME; peer_parallel "$work/peer"; t1=$EPOCHREALTIME
    echo "$t1 - $t0" | bc >>"$work/par.t"
    peer_clean
done
rs_s=$(median <"$work/rs.t"); peer_s=$(median <"$work/peer.t"); par_s=$(median <"$work/par.t")
floor=$(cut -d' ' -f1 "$work/floor.t" | median)
sha_rate=$(cut -d' ' -f2 "$work/floor.t" | median)
rsa_rate=$(cut -d' ' -f3 "$work/floor.t" | median)
floor_all=$(cut -d' ' -f4 "$work/floor.t" | median)
ratio=$(median <"$work/ratio.t")
ratio_all=$(median <"$work/ratio_all.t")
io_s=$(cut -d' ' -f1 "$work/io.t" | median); ratio_io=$(median <"$work/ratio_io.t")
io_parts=$(for k in 2 3 4; do cut -d' ' -f$k "$work/io.t" | median; done | xargs printf '%.3f s, %.3f s, %.3f s')
range() { sort -g "$1" | awk 'NR==1 {lo=$1} {hi=$1} END {printf "%.2f to %.2f", lo, hi}'; }
ratio_range=$(range "$work/ratio.t")
bare_s=$(median <"$work/bare.t"); ratio_bare=$(median <"$work/ratio_bare.t"); bare_floor=$(median <"$work/bare_floor.t")

# The same template against the packaged .deb, as Debian's service gets
# it: data.tar.xz is decompressed in the run (its modules carry Debian's
# signatures, which sign-template digests around, as for stripped ones).
mkdir -p "$work/debs"
ln -s "$(bash tests/tools/newest-deb.sh "$fixtures/debs" "$pkg")" "$work/debs/"
: >"$work/deb.t"
for i in $(seq "$runs"); do
    rm -rf "$work/out-deb"
    t0=$EPOCHREALTIME; "$rs" sign-template --quiet "$work/files.json" --packages "$work/debs" --key "$work/k.pem" \
        --cert "$work/c.pem" --output "$work/out-deb"; t1=$EPOCHREALTIME
    echo "$t1 - $t0" | bc >>"$work/deb.t"
done
deb_s=$(median <"$work/deb.t")

peak=$( { /usr/bin/time -f %M "$rs" sign-template --quiet "$work/files.json" --packages "$work/pkgs" \
    --key "$work/k.pem" --cert "$work/c.pem" --output "$work/out-mem"; } 2>&1 | tail -n 1)

: >"$work/at.t"; : >"$work/cp.t"; : >"$work/atb.t"; : >"$work/at_ratio.t"
for i in $(seq "$runs"); do
    rm -rf "$work/attached" "$work/copy"
    t0=$EPOCHREALTIME; "$rs" attach-tree --quiet --signatures "$work/out/signatures/$pkg" --root "$work/pkgs/$pkg" \
        --output "$work/attached" --cert "$work/c.pem"; t1=$EPOCHREALTIME
    echo "$t1 - $t0" | bc >>"$work/at.t"
    t0=$EPOCHREALTIME; cp -r "$work/pkgs/$pkg" "$work/copy"; t1=$EPOCHREALTIME
    echo "$t1 - $t0" | bc >>"$work/cp.t"
    # attach-tree's bound: the copy plus one SHA-256 pass over the tree's
    # bytes spread over the cores (it must read every byte to digest what
    # it attaches to, and write every byte it outputs; nothing less will do).
    t2=$EPOCHREALTIME; (cd "$work/copy" && find . -type f -print0 |
        xargs -0 -r -P "$cores" -n 64 sha256sum >/dev/null); t3=$EPOCHREALTIME
    echo "$t1 - $t0 + $t3 - $t2" | bc >>"$work/atb.t"
    echo "($(tail -n 1 "$work/at.t")) / ($(tail -n 1 "$work/atb.t"))" | bc -l >>"$work/at_ratio.t"
done
at_s=$(median <"$work/at.t"); cp_s=$(median <"$work/cp.t"); atb_s=$(median <"$work/atb.t")
at_peak=$( { /usr/bin/time -f %M "$rs" attach-tree --quiet --signatures "$work/out/signatures/$pkg" \
    --root "$work/pkgs/$pkg" --output "$work/attached-mem" --cert "$work/c.pem"; } 2>&1 | tail -n 1)

printf '%s: %d files, %.1f MB, %d cores, median of %d runs, in %s\n' "$pkg" "$nfiles" "$(echo "$bytes/1000000" | bc -l)" "$cores" "$runs" "$bench_dir"
printf '  %-44s %8.3f s\n' "reprosign sign-template" "$rs_s"
printf '  %-44s %8.3f s\n' "per-file loop (sign-file -d, sbsign --detached)" "$peer_s"
printf '  %-44s %8.1fx faster\n' "speed-up" "$(echo "$peer_s / $rs_s" | bc -l)"
printf '  %-44s %8.3f s\n' "the same loop, xargs -P $cores" "$par_s"
printf '  %-44s %8.1fx faster\n' "speed-up over xargs -P $cores" "$(echo "$par_s / $rs_s" | bc -l)"
printf '  %-44s %8.3f s  (SHA-256 %.0f MB/s, RSA-2048 %.0f sign/s)\n' "floor" "$floor" "$(echo "$sha_rate/1000000" | bc -l)" "$rsa_rate"
printf '  %-44s %8.2fx the floor (each run against its own: %s)\n' "sign-template" "$ratio" "$ratio_range"
printf '  %-44s %8.3f s\n' "floor with openssl speed -multi $cores" "$floor_all"
printf '  %-44s %8.2fx that floor\n' "sign-template" "$ratio_all"
printf '  %-44s %8.3f s\n' "bare signer ($cores threads)" "$bare_s"
printf '  %-44s %8.2fx the floor (runs: %s)\n' "bare signer" "$bare_floor" "$(range "$work/bare_floor.t")"
printf '  %-44s %8.2fx the bare signer (runs: %s)\n' "sign-template" "$ratio_bare" "$(range "$work/ratio_bare.t")"
printf '  %-44s %8.3f s  (cat the inputs, cp -r signatures/, gzip -1 the tar: %s; over %d cores)\n' "the job's own I/O" "$io_s" "$io_parts" "$cores"
printf '  %-44s %8.2fx the floor plus that I/O\n' "sign-template" "$ratio_io"
printf '  %-44s %8d KiB\n' "sign-template peak memory (max RSS)" "$peak"
printf '  %-44s %8.3f s\n' "sign-template from the packaged .deb" "$deb_s"
printf '  %-44s %8.3f s\n' "reprosign attach-tree" "$at_s"
printf '  %-44s %8.3f s\n' "cp -r of the same tree" "$cp_s"
printf '  %-44s %8.2fx\n' "attach-tree / cp -r" "$(echo "$at_s / $cp_s" | bc -l)"
printf '  %-44s %8.3f s\n' "bound: cp -r, then SHA-256 over $cores cores" "$atb_s"
printf '  %-44s %8.2fx the bound (each run against its own: %s)\n' "attach-tree" "$(median <"$work/at_ratio.t")" "$(range "$work/at_ratio.t")"
printf '  %-44s %8d KiB\n' "attach-tree peak memory (max RSS)" "$at_peak"

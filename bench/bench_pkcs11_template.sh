#!/bin/bash
# sign-template over one kernel flavour (about 1,100 files: its vmlinuz and
# every module) with the key on a SoftHSM2 token, --jobs 2 against --jobs 1
# (goal: at least 1.8x), and the same pair with the key in a PEM file as
# the machine's own scaling at that moment. The runs of a round follow one
# another; each round's ratios are taken and their medians reported, since
# the machine is shared and its load moves. The token's and the file's
# signatures are checked to be the same bytes. Beside the times, the CPU
# time of each token run over its wall time: how many cores it kept busy,
# which a loaded machine lowers less than it lowers the speed-up (one
# session for every worker would keep it at 1).
#   bench/bench_pkcs11_template.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-5}
rs=$(realpath "$build")/reprosign
fixtures=$(realpath -m -- "${FIXTURES:-build/fixtures}")
bench_dir=${BENCH_DIR:-$( [ -w /dev/shm ] && echo /dev/shm || echo /tmp )}
work=$(mktemp -d -p "$bench_dir")
trap 'rm -rf "$work"' EXIT

. bench/kernel_tree.sh
. bench/softhsm_token.sh
kernel_tree "$rs" "$fixtures" "$work"
softhsm_token "$work"
nfiles=$(wc -l <"$work/files")

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
run() {   # run KEY JOBS OUT: prints the wall seconds and the CPU seconds over them
    rm -rf "$3"
    /usr/bin/time -f '%e %U %S' -o "$work/time" "$rs" sign-template --quiet --no-signing-time "$work/files.json" \
        --packages "$work/pkgs" --key "$1" --cert "$work/cert.pem" --jobs "$2" --output "$3"
    awk '{printf "%s %.2f\n", $1, ($2 + $3) / $1}' "$work/time"
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
: >"$work/rounds"
for ((r = 0; r < rounds; r++)); do
    tok1=$(run "$uri" 1 "$work/tok1"); tok2=$(run "$uri" 2 "$work/tok2")
    pem1=$(run "$work/key.pem" 1 "$work/pem1"); pem2=$(run "$work/key.pem" 2 "$work/pem2")
    echo "${tok1% *} ${tok2% *} ${pem1% *} ${pem2% *} ${tok1#* } ${tok2#* }" >>"$work/rounds"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
for d in tok1 tok2 pem2; do
    diff -r "$work/pem1/signatures" "$work/$d/signatures" >/dev/null ||
        { echo "bench_pkcs11_template: $d's signatures differ from the file key's" >&2; exit 1; }
done

echo "sign-template of $nfiles files, seconds per round (token --jobs 1, token --jobs 2, file 1, file 2;
then the token runs' CPU time over wall time, --jobs 1 and 2):"
sed 's/^/  /' "$work/rounds"
col() { awk "{print $1}" "$work/rounds" | median; }
printf 'medians over %d rounds of each round'"'"'s ratios:\n' "$rounds"
printf '  token: --jobs 2 is %.2fx --jobs 1 (goal >= 1.8x)\n' "$(col '$1/$2')"
printf '  file key: --jobs 2 is %.2fx --jobs 1 (the machine at that moment)\n' "$(col '$3/$4')"
printf '  token / file key: --jobs 1 %.2fx, --jobs 2 %.2fx\n' "$(col '$1/$3')" "$(col '$2/$4')"
printf '  token: cores kept busy (CPU/wall), --jobs 1 %.2f, --jobs 2 %.2f\n' "$(col '$5')" "$(col '$6')"

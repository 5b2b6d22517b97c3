#!/bin/bash
# Builds the libFuzzer targets (clang, ASan+UBSan), generates seed corpora
# from the Debian fixtures and runs every tests/fuzz/fuzz_*.c target for
# SECONDS each, then prints one line of libFuzzer's final stats per target.
# With a small SECONDS (e.g. 20) it is the CI smoke run.
#
# Each target starts from its checked-in corpus, tests/fuzz/corpus/TARGET/
# (every finding ever made, and the seeds that reach the most code), and
# the seeds make-seeds.sh generates; a failure to make the seeds fails the
# run. ctest replays the checked-in corpus in every build, without
# libFuzzer (fuzz_corpus.TARGET); docs/development.md says how to add a
# finding to it.
#
# usage: tests/fuzz/run.sh [SECONDS]          (default 60)
# env:   FUZZ_TARGETS="fuzz_pe ..."  run only these
#        FUZZ_MAX_LEN (default 16384), FUZZ_BUILD (default build-fuzz)
#        FUZZ_JOBS    targets run at once (default: the number of cores)
#        FIXTURES (default build/fixtures)
# Exit status: 0 if every target built and ran clean, 1 otherwise.
# The corpus grows across runs in $FUZZ_BUILD/corpus/TARGET; crashes are
# saved in $FUZZ_BUILD/artifacts/TARGET/ (reproduce: TARGET FILE).
set -uo pipefail

seconds=${1:-60}
[[ $seconds =~ ^[0-9]+$ ]] || { echo "usage: tests/fuzz/run.sh [SECONDS]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/${FUZZ_BUILD:-build-fuzz}
max_len=${FUZZ_MAX_LEN:-16384}
cd "$root" || exit 1

command -v clang >/dev/null || { echo "fuzz: clang is not installed" >&2; exit 1; }
CC=clang cmake -S . -B "$build" -DREPROSIGN_FUZZ=ON >/dev/null || exit 1

# Targets are whatever fuzz_*.c exist now, so new ones join automatically.
if [[ -n ${FUZZ_TARGETS:-} ]]; then
    read -ra targets <<<"$FUZZ_TARGETS"
else
    targets=()
    for src in tests/fuzz/fuzz_*.c; do
        [[ -e $src ]] && targets+=("$(basename "$src" .c)")
    done
fi
(( ${#targets[@]} )) || { echo "fuzz: no tests/fuzz/fuzz_*.c targets" >&2; exit 1; }

# Built one by one: a target that does not compile is reported, and the
# others still run. So is one without a checked-in corpus, which ctest's
# fuzz_corpus.TARGET fails too.
failed=0
declare -A status
built=()
for t in "${targets[@]}"; do
    if [[ ! -d tests/fuzz/corpus/$t ]]; then
        status[$t]="no checked-in corpus tests/fuzz/corpus/$t/"
        failed=1
    elif nice cmake --build "$build" -j"$(nproc)" --target "$t" >"$build/$t.build.log" 2>&1; then
        built+=("$t")
    else
        status[$t]="build failed (see $build/$t.build.log)"
        failed=1
    fi
done
# The CLI (sanitized, from the same build) makes the signed seeds. Without
# them a run would quietly fuzz less, so either failing fails the run.
if ! nice cmake --build "$build" -j"$(nproc)" --target reprosign >"$build/reprosign.build.log" 2>&1; then
    echo "fuzz: the CLI that makes the seeds does not build (see $build/reprosign.build.log)" >&2
    exit 1
fi

seeds=$build/seeds
rm -rf "$seeds"
if ! REPROSIGN=$build/reprosign tests/fuzz/make-seeds.sh "$seeds"; then
    echo "fuzz: tests/fuzz/make-seeds.sh failed (see above): no seeds, no run" >&2
    exit 1
fi

# run_target TARGET: one target for $seconds, its exit status in $build/TARGET.rc.
# New inputs go to the first directory, $build/corpus/TARGET; the
# checked-in corpus and the seeds are only read.
run_target() {
    local t=$1 rc
    local corpus=$build/corpus/$t artifacts=$build/artifacts/$t log=$build/$t.log
    mkdir -p "$corpus" "$artifacts" "$seeds/$t"
    echo "fuzz: $t for ${seconds}s" >&2
    # nice: the machine is shared. -timeout turns a hang into a finding.
    nice -n 10 "$build/tests/fuzz/$t" -max_total_time="$seconds" -max_len="$max_len" -timeout=30 \
        -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" "$root/tests/fuzz/corpus/$t" "$seeds/$t" \
        >"$log" 2>&1
    rc=$?
    echo "$rc" >"$build/$t.rc"
}

# One target per core at a time: each runs single-threaded, so each still
# gets its full SECONDS of one core.
parallel=${FUZZ_JOBS:-$(nproc)}
for t in "${built[@]}"; do
    rm -f "$build/$t.rc"
    while (( $(jobs -rp | wc -l) >= parallel )); do wait -n; done
    run_target "$t" &
done
wait
for t in "${built[@]}"; do
    rc=$(cat "$build/$t.rc" 2>/dev/null || echo lost)
    log=$build/$t.log
    if [[ $rc == 0 ]]; then
        status[$t]=ok
    else
        status[$t]="FAILED (exit $rc): $(grep -m1 -E '^(==[0-9]+==ERROR|SUMMARY|BUG)' "$log")"
        failed=1
    fi
done

stat() { grep -m1 "^stat::$2:" "$1" 2>/dev/null | awk '{print $2}'; }
printf '\n%-22s %6s %11s %8s %6s %7s %6s  %s\n' target secs executions exec/s cov ft corpus result
for t in "${targets[@]}"; do
    log=$build/$t.log
    if [[ ${status[$t]} != ok && ${status[$t]} != FAILED* ]]; then   # never ran
        printf '%-22s %6s %11s %8s %6s %7s %6s  %s\n' "$t" - - - - - - "${status[$t]}"
        continue
    fi
    # The last status line carries the coverage (edges) and features.
    last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$last")
    printf '%-22s %6s %11s %8s %6s %7s %6s  %s\n' "$t" "$seconds" "$(stat "$log" number_of_executed_units)" \
        "$(stat "$log" average_exec_per_sec)" "${cov:--}" "${ft:--}" "${corp:--}" "${status[$t]}"
done
exit $failed

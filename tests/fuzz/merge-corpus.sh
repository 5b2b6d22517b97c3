#!/bin/bash
# Refreshes the checked-in corpus, tests/fuzz/corpus/TARGET/, after a fuzz
# run (tests/fuzz/run.sh): every finding-* file stays as it is, and the
# rest becomes the smallest set of inputs that reaches every edge of code
# the findings, the corpus, the seeds and the run's own corpus reach
# (libFuzzer's -merge=1, smaller inputs first), each cut at 64 KiB. Edges,
# not libFuzzer's hit counts too (-use_counters=0): those keep three times
# the files for no more code reached. The result is then run once through
# the target: a crashing input (which -merge would only skip) fails.
#
# usage: tests/fuzz/merge-corpus.sh [TARGET...]   (default: every target)
# env:   FUZZ_BUILD (default build-fuzz): the build run.sh used
set -euo pipefail
shopt -s nullglob

root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/${FUZZ_BUILD:-build-fuzz}
cd "$root"

targets=("$@")
if (( ! ${#targets[@]} )); then
    for src in tests/fuzz/fuzz_*.c; do
        targets+=("$(basename "$src" .c)")
    done
fi
for t in "${targets[@]}"; do
    corpus=tests/fuzz/corpus/$t bin=$build/tests/fuzz/$t log=$build/$t.merge.log
    [[ -x $bin ]] || { echo "merge-corpus: $bin: not built (run tests/fuzz/run.sh first)" >&2; exit 1; }
    mkdir -p "$corpus"
    new=$(mktemp -d)
    findings=("$corpus"/finding-*)
    (( ${#findings[@]} )) && cp "${findings[@]}" "$new/"
    # The first directory is the output: what it holds (the findings) is
    # kept, and inputs from the others join only for what they add.
    inputs=("$corpus")
    for d in "$build/seeds/$t" "$build/corpus/$t"; do
        [[ -d $d ]] && inputs+=("$d")
    done
    if ! nice "$bin" -merge=1 -use_counters=0 -max_len=65536 -timeout=30 "$new" "${inputs[@]}" >"$log" 2>&1; then
        echo "merge-corpus: $t: the merge failed (see $log)" >&2
        exit 1
    fi
    if ! nice "$bin" -runs=0 "$new" >>"$log" 2>&1; then
        echo "merge-corpus: $t: an input of the merged corpus fails (see $log)" >&2
        exit 1
    fi
    find "$corpus" -maxdepth 1 -type f ! -name 'finding-*' -delete
    cp "$new"/* "$corpus/"
    rm -rf "$new"
    echo "merge-corpus: $t: $(ls "$corpus" | wc -l) files, $(du -sb "$corpus" | cut -f1) bytes"
done

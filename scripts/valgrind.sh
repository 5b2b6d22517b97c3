#!/bin/sh
# Runs the test suite with every reprosign invocation under valgrind's
# memcheck, in build-valgrind/. Any memory error or definite/possible leak
# in any invocation fails the run, and the logs are kept for reading.
#   scripts/valgrind.sh [CTEST ARGS...]     e.g. -R 'pe_|uefi_vars' or -LE network
# The unit tests (which link the library directly) run under valgrind too.
set -eu
cd "$(dirname "$0")/.."
build=build-valgrind
logs=$(pwd)/$build/valgrind-logs
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind is not installed" >&2; exit 1; }

mkdir -p "$build"
wrapper=$(pwd)/$build/reprosign-valgrind
# The tests quote $REPROSIGN, so it must name one executable: this wrapper.
cat >"$wrapper" <<WRAP
#!/bin/sh
exec valgrind --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,possible \\
    --errors-for-leak-kinds=definite,possible --suppressions="$(pwd)/scripts/valgrind.supp" --log-file="$logs/vg.%p.log" "$(pwd)/$build/reprosign" "\$@"
WRAP
sed "s|\"$(pwd)/$build/reprosign\" ||" "$wrapper" >"$wrapper.unit"
chmod 0755 "$wrapper" "$wrapper.unit"

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DREPROSIGN_TEST_COMMAND="$wrapper" >/dev/null
cmake --build "$build" -j"$(nproc)"
rm -rf "$logs" && mkdir -p "$logs"
# Some tests run reprosign as another user (the service's uid allowlist):
# their valgrind must be able to write its log too.
chmod 1777 "$logs"
rc=0
for t in "$build"/tests/test_*; do
    [ -x "$t" ] || continue
    "$wrapper.unit" "$t" >/dev/null 2>&1 || { s=$?; [ "$s" -eq 77 ] || { echo "unit $(basename "$t"): exit $s"; rc=1; }; }
done
# test_adversarial's "no hang" limit is 10 s a run; memcheck is that much
# slower on its own.
ADVERSARIAL_TIMEOUT=300 ctest --test-dir "$build" --output-on-failure -j"$(nproc)" --timeout 7200 -L interop "$@" || rc=$?

# With --quiet, memcheck's reports are the "==PID==" lines. "--PID--"
# lines are valgrind's own notes, such as the openat2 that 3.19 does not
# know (reprosign then walks the path itself, which the tests cover).
reported=$(grep -lE '^==[0-9]+==' "$logs"/vg.*.log 2>/dev/null || true)
reports=$(printf '%s' "$reported" | grep -c . || true)
runs=$(find "$logs" -name 'vg.*.log' | wc -l)
echo "valgrind: $runs reprosign runs, $reports with reports (logs in $logs)"
for f in $(printf '%s\n' "$reported" | head -n 5); do
    echo "== $f"; head -n 40 "$f"
done
[ "$reports" -eq 0 ] && [ "$rc" -eq 0 ]

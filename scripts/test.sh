#!/bin/sh
# The whole test suite, from a fresh Debian 12 machine (as root); what CI
# runs. About 35 minutes on 2 cores, most of it the tests themselves:
#   1. installs the dependencies (skip with REPROSIGN_SKIP_DEPS=1) and
#      checks that every tool a test calls comes from them;
#   2. builds build/ (RelWithDebInfo) and build-asan/ (AddressSanitizer +
#      UndefinedBehaviorSanitizer) while Debian's real packages download;
#   3. runs every test once: the unit tests, the QEMU boots (their time is
#      the emulated firmware's) and what measures the optimised build's
#      memory in build/; everything else under the sanitizers in
#      build-asan/ (the interop tests drive the CLI against sbsigntool,
#      osslsigncode, pesign, sign-file, modinfo, SoftHSM2, reprepro, gpgv
#      and Debian's real packages);
#   4. builds the Debian package, whose build runs the network-free tests
#      once more, and runs lintian on it;
#   5. runs clang's static analyzer over src/ (scripts/scan.sh) and builds
#      the Release type, warnings as errors;
#   6. builds every libFuzzer target and runs each briefly (tests/fuzz/run.sh).
# scripts/slow-tests.sh runs the rest (the slow-labelled end-to-end cases,
# every test again in the optimised build, reprotest, the package on
# trixie, the cross builds, the mutation check): run it before resolving
# anything it covers. With REPROSIGN_VALGRIND=1 this script also runs the
# suite under valgrind memcheck.
set -eu
cd "$(dirname "$0")/.."
# One line per stage with the time since the start, so a CI log shows
# where its minutes went.
started=$(date +%s)
stage() { echo "== test.sh: $* (at $(($(date +%s) - started)) s)"; }
stage dependencies
[ "${REPROSIGN_SKIP_DEPS:-0}" = 1 ] || sh scripts/install-deps.sh
# Every tool a test calls must come from what install-deps.sh installs: a
# missing one fails here, in seconds, not at its test an hour on.
python3 tests/tools/check-deps.py
jobs=$(nproc)
fixtures=$(pwd)/build/fixtures
# Everything a test needs was just installed: a test that would skip for a
# missing tool, fixture or privilege fails instead (tests/lib.sh skip).
export REPROSIGN_REQUIRE_ALL=1

stage build
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$jobs"
# The downloads mostly wait on the network: the sanitized build uses the
# cores meanwhile.
stage "fixtures, beside the sanitized build"
mkdir -p "$fixtures"
bash tests/fetch-fixtures.sh "$fixtures" >"$fixtures.log" 2>&1 &
fetching=$!
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DREPROSIGN_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
if ! wait "$fetching"; then
    cat "$fixtures.log"; echo "test.sh: cannot fetch the fixtures" >&2; exit 1
fi

stage "tests: unit, the boots, memory (optimised build)"
ctest --test-dir build --output-on-failure -j"$jobs" -L 'unit|vm|plain' -LE slow

stage "tests under ASan+UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j"$jobs" -LE 'slow|vm'

stage "the Debian package"
# The Debian package: dpkg-buildpackage in a copy of the tree (its build runs
# the network-free tests again), then lintian.
REPROSIGN_TEST_PACKAGE=1 REPROSIGN_INSTALL_PACKAGE=1 REPROSIGN=$(pwd)/build/reprosign TESTS_DIR=$(pwd)/tests \
    bash tests/interop/test_debian_package.sh

# Memcheck over the suite is slow (tens of minutes): opt in with
# REPROSIGN_VALGRIND=1 (scripts/valgrind.sh). The kernel pipeline's 1,121 modules
# take 3.5 min under it; the boots and the package build are left out.
if [ "${REPROSIGN_VALGRIND:-0}" = 1 ]; then
    stage "valgrind memcheck"
    sh scripts/valgrind.sh -E 'uefi_boot|debian_package'
fi

stage "static analysis"
# Static analysis: scan-build must report nothing.
sh scripts/scan.sh build-scan

# -Werror meets every optimiser: gcc's -O3 sees uninitialised paths through
# inlined code that -O2 does not (MinSizeRel's -Os is in the slow target).
stage "Release build"
cmake -S . -B build-Release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-Release -j"$jobs"

if [ -x tests/fuzz/run.sh ]; then
    stage "fuzz smoke runs"
    tests/fuzz/run.sh "${REPROSIGN_FUZZ_SECONDS:-5}"
fi
stage "all passed"

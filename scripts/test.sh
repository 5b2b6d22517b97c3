#!/bin/sh
# The whole test suite, from a fresh Debian 12 machine (as root):
#   1. installs the dependencies (skip with REPROSIGN_SKIP_DEPS=1);
#   2. builds build/ and runs every test (unit tests link the library; the
#      interop tests drive the CLI against sbsigntool, osslsigncode, pesign,
#      sign-file, modinfo, SoftHSM2 and Debian's real packages);
#   3. rebuilds with AddressSanitizer + UndefinedBehaviorSanitizer in
#      build-asan/ and runs the whole suite again, but for the QEMU boots
#      (their time is the emulated firmware's; the chain code they check
#      runs under the sanitizers in the chain tests);
#   4. builds the Debian package and runs lintian on it, and builds it
#      twice with reprotest, which must find the same bytes;
#   5. with REPROSIGN_VALGRIND=1, runs the suite under valgrind memcheck;
#   6. runs clang's static analyzer over src/ (scripts/scan.sh), and
#      builds the Release and MinSizeRel types, warnings as errors;
#   7. runs every libFuzzer target briefly (tests/fuzz/run.sh, smoke mode).
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
stage fixtures
bash tests/fetch-fixtures.sh "$fixtures"
stage tests
ctest --test-dir build --output-on-failure -j"$jobs" -LE slow

stage "tests under ASan+UBSan"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DREPROSIGN_SANITIZE=ON
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j"$jobs" -LE 'slow|vm'

stage "the Debian package"
# The Debian package: dpkg-buildpackage in a copy of the tree (its build runs
# the network-free tests again), then lintian.
REPROSIGN_TEST_PACKAGE=1 REPROSIGN_INSTALL_PACKAGE=1 REPROSIGN=$(pwd)/build/reprosign TESTS_DIR=$(pwd)/tests \
    bash tests/interop/test_debian_package.sh
stage "the package built twice by reprotest"
# Built twice by reprotest, the second build varied: the same .debs.
REPROSIGN_TEST_PACKAGE=1 REPROSIGN=$(pwd)/build/reprosign TESTS_DIR=$(pwd)/tests bash tests/interop/test_reproducible_package.sh
stage "the package on trixie"
# The same package built, tested and installed on trixie, in a build chroot.
REPROSIGN_TEST_PACKAGE=1 REPROSIGN=$(pwd)/build/reprosign TESTS_DIR=$(pwd)/tests FIXTURES="$fixtures" \
    bash tests/interop/test_trixie_package.sh

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

# -Werror meets every optimiser: gcc's -O3 and -Os see uninitialised paths
# through inlined code that -O2 does not, so the other build types must build.
stage "Release and MinSizeRel builds"
for type in Release MinSizeRel; do
    cmake -S . -B "build-$type" -DCMAKE_BUILD_TYPE="$type" >/dev/null
    cmake --build "build-$type" -j"$jobs"
done

if [ -x tests/fuzz/run.sh ]; then
    stage "fuzz smoke runs"
    tests/fuzz/run.sh "${REPROSIGN_FUZZ_SECONDS:-20}"
fi
stage "all passed"

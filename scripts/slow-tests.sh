#!/bin/sh
# What CI leaves out, for time; run it before resolving anything it covers,
# after scripts/test.sh has installed the dependencies (about 2 hours on
# 2 cores):
#   - every test in the optimised build, the slow-labelled ones too (a
#     line "# ctest-label: slow": the kernel templates' archive round
#     trips, trixie's, the boots of forky's chains and of i386 and arm64,
#     the cross builds for i386 and s390x, the rest of the boot matrix);
#     scripts/test.sh runs most of them under the sanitizers only;
#   - the Debian package built twice by reprotest, and built, tested and
#     installed on trixie;
#   - the MinSizeRel build, warnings as errors;
#   - the mutation check (scripts/mutation-check.sh): every mutation of a
#     claim in tests/mutations/ must be caught by the network-free tests.
#   sh scripts/slow-tests.sh
set -eu
cd "$(dirname "$0")/.."
started=$(date +%s)
stage() { echo "== slow-tests.sh: $* (at $(($(date +%s) - started)) s)"; }
export REPROSIGN_REQUIRE_ALL=1
jobs=$(nproc)
fixtures=$(pwd)/build/fixtures
stage build
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$jobs"
bash tests/fetch-fixtures.sh "$fixtures"
stage "every test, optimised build"
ctest --test-dir build --output-on-failure -j"$jobs"
stage "the package built twice by reprotest"
REPROSIGN_TEST_PACKAGE=1 REPROSIGN=$(pwd)/build/reprosign TESTS_DIR=$(pwd)/tests \
    bash tests/interop/test_reproducible_package.sh
stage "the package on trixie"
REPROSIGN_TEST_PACKAGE=1 REPROSIGN=$(pwd)/build/reprosign TESTS_DIR=$(pwd)/tests FIXTURES="$fixtures" \
    bash tests/interop/test_trixie_package.sh
stage "MinSizeRel build"
cmake -S . -B build-MinSizeRel -DCMAKE_BUILD_TYPE=MinSizeRel >/dev/null
cmake --build build-MinSizeRel -j"$jobs"
stage "mutation check"
MUTATION_JOBS=$jobs bash scripts/mutation-check.sh
stage "all passed"

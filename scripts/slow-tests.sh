#!/bin/sh
# The heavy end-to-end cases that CI leaves out (tests marked with a line
# "# ctest-label: slow"): the kernel template's archive round trip and the
# slowest boots. Run before a release, after scripts/test.sh has installed
# the dependencies and built build/:
#   sh scripts/slow-tests.sh
set -eu
cd "$(dirname "$0")/.."
export REPROSIGN_REQUIRE_ALL=1
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)"
bash tests/fetch-fixtures.sh "$(pwd)/build/fixtures"
exec ctest --test-dir build --output-on-failure -L slow

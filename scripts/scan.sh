#!/bin/sh
# Static analysis of the library and the CLI with clang's analyzer
# (scan-build, Debian's clang-tools); exits non-zero on any report.
# unix.Malloc is off: the analyzer does not model the cleanup attribute
# (_cleanup_free_ and its kin), so it reports each of those frees as a
# leak. Leaks are checked where they run instead: LeakSanitizer in the
# ASan+UBSan suite, and valgrind (scripts/valgrind.sh).
#   sh scripts/scan.sh [BUILDDIR]      (default build-scan)
set -eu
cd "$(dirname "$0")/.."
dir=${1:-build-scan}
command -v scan-build >/dev/null || { echo "scan.sh: scan-build is not installed (clang-tools)" >&2; exit 1; }
rm -rf "$dir"
scan-build -o "$dir/report" cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug >/dev/null
exec scan-build --status-bugs -disable-checker unix.Malloc -o "$dir/report" \
    cmake --build "$dir" -j"$(nproc)" --target reprosign_lib reprosign

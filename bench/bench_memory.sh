#!/bin/bash
# Peak memory of sign-template as the number of files grows: 1,000, 10,000
# and 50,000 kernel modules (one real module, its signature stripped, hard
# linked under as many names, so the tree costs no disk), signed with a
# PEM key; and the same for attach-tree. Goal: flat, and at most 64 MiB.
#   bench/bench_memory.sh [BUILD_DIR] [COUNTS...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}; shift || true
counts=${*:-1000 10000 50000}
rs=$(pwd)/$build/reprosign
fixtures=$(realpath -m -- "${FIXTURES:-build/fixtures}")
bash tests/fetch-fixtures.sh "$fixtures" kernel >/dev/null
bench_dir=${BENCH_DIR:-$( [ -w /dev/shm ] && echo /dev/shm || echo /tmp )}
work=$(mktemp -d -p "$bench_dir")
trap 'rm -rf "$work"' EXIT
module=$(find "$(readlink -f "$fixtures/kernel")/lib/modules" -name 'nlmon.ko' | head -n 1)
"$rs" strip "$module" --output "$work/m.ko"
openssl req -new -x509 -newkey rsa:2048 -nodes -subj /CN=bench -keyout "$work/k.pem" -out "$work/c.pem" 2>/dev/null

printf '%8s  %18s  %18s  %10s\n' files "sign-template KiB" "attach-tree KiB" "per file"
prev=
for n in $counts; do
    root=$work/pkgs-$n/modules-pkg
    mkdir -p "$root"
    python3 - "$root" "$work/m.ko" "$n" >"$work/files-$n.json" <<'PY'
import json, os, sys
root, module, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
files = []
for i in range(n):
    rel = "lib/modules/x/kernel/d%03d/m%05d.ko" % (i // 1000, i)
    os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
    os.link(module, os.path.join(root, rel))
    files.append({"sig_type": "linux-module", "file": rel})
print(json.dumps({"packages": {"modules-pkg": {"trusted_certs": [], "files": files}}}))
PY
    st=$( { /usr/bin/time -f %M "$rs" sign-template --quiet "$work/files-$n.json" --packages "$work/pkgs-$n" \
        --key "$work/k.pem" --cert "$work/c.pem" --output "$work/out-$n"; } 2>&1 | tail -n 1)
    at=$( { /usr/bin/time -f %M "$rs" attach-tree --quiet --signatures "$work/out-$n/signatures/modules-pkg" \
        --root "$root" --output "$work/attached-$n" --cert "$work/c.pem"; } 2>&1 | tail -n 1)
    per=
    [ -n "$prev" ] && per=$(echo "($st - ${prev%:*}) * 1024 / ($n - ${prev#*:})" | bc)
    printf '%8d  %18d  %18d  %10s\n' "$n" "$st" "$at" "${per:+$per B}"
    prev=$st:$n
    rm -rf "$work/pkgs-$n" "$work/out-$n" "$work/attached-$n"
done

#!/bin/bash
# ctest-label: plain
# Memory as the number of files grows: sign-template and attach-tree over
# 5,000 and then 25,000 EFI images (one image hard-linked under every name,
# so the tree costs no disk). Both must stay under 64 MiB, and neither may
# grow (at most 32 bytes a file, for the allocator's noise; measured: none).
# - attach-tree keeps its entries in a journal on disk and reads it a
#   window at a time.
# - sign-template keeps its files in a store on disk, read back a window
#   of 4,096 at a time, and makes signatures at most 1,024 files ahead of
#   the tarball's writer: past one window, nothing grows. Before the store,
#   its table of paths and digests grew about 200 bytes a file.
# AAVMF's 64 MiB variable store is read and written holding only its
# volume. Under the sanitizers the peaks measure their shadow memory
# instead, so there only the runs themselves are checked.
. "$TESTS_DIR/lib.sh"
need_tool python3
make_key db

python3 "$TESTS_DIR/tools/mkpe.py" "$WORK/one.efi" --sections 1 --section-size 512

# tree N: pkgs-N/big-unsigned with N names of one image, and files-N.json.
tree() {
    python3 - "$WORK" "$1" <<'PY'
import json, os, sys
work, n = sys.argv[1], int(sys.argv[2])
root = os.path.join(work, "pkgs-%d" % n, "big-unsigned")
files = []
for i in range(n):
    rel = "usr/lib/big/d%03d/f%05d.efi" % (i // 1000, i)
    os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
    os.link(os.path.join(work, "one.efi"), os.path.join(root, rel))
    files.append({"sig_type": "efi", "file": rel})
json.dump({"packages": {"big-unsigned": {"trusted_certs": [], "files": files}}},
          open(os.path.join(work, "files-%d.json" % n), "w"), indent=2)
PY
}

for n in 5000 25000; do
    tree "$n"
    check "sign-template over $n files" peak_kib "$WORK/st-$n" "$REPROSIGN" sign-template --quiet "$WORK/files-$n.json" \
        --packages "$WORK/pkgs-$n" --key "$WORK/db.key" --cert "$WORK/db.crt" --output "$WORK/out-$n"
    check "... one signature for each" test "$(find "$WORK/out-$n/signatures" -name '*.sig' | wc -l)" -eq "$n"
    check "attach-tree over $n files" peak_kib "$WORK/at-$n" "$REPROSIGN" attach-tree --quiet \
        --signatures "$WORK/out-$n/signatures/big-unsigned" --root "$WORK/pkgs-$n/big-unsigned" --output "$WORK/attached-$n"
    check "... the first image signed" "$REPROSIGN" verify --cert "$WORK/db.crt" "$WORK/attached-$n/usr/lib/big/d000/f00000.efi"
    check "... and the last" "$REPROSIGN" verify --cert "$WORK/db.crt" \
        "$WORK/attached-$n/usr/lib/big/$(printf 'd%03d/f%05d' $((n / 1000 - 1)) $((n - 1))).efi"
    rm -rf "$WORK/out-$n" "$WORK/attached-$n" "$WORK/pkgs-$n"
done

# AAVMF's variable store is a 64 MiB flash image around a 768 KiB volume:
# what reads it holds the volume, and what writes it copies the rest.
AAVMF=/usr/share/AAVMF/AAVMF_VARS.ms.fd
if [ -r "$AAVMF" ]; then
    make_key PK; make_key KEK
    check "efi list on AAVMF's 64 MiB store" peak_kib "$WORK/list-aavmf" "$REPROSIGN" efi list --vars "$AAVMF"
    check "efi enroll into it, Microsoft's lists read from it too" peak_kib "$WORK/enroll-aavmf" "$REPROSIGN" efi enroll \
        --vars "$AAVMF" --pk "$WORK/PK.crt" --kek "$WORK/KEK.crt" --db "$WORK/db.crt" --microsoft="$AAVMF" \
        --output "$WORK/aavmf.fd"
    if ! sanitized_build; then
        for m in list enroll; do
            check "efi $m on it peaks at $(($(cat "$WORK/$m-aavmf") / 1024)) MiB, under 32 (the file is 64)" \
                test "$(cat "$WORK/$m-aavmf")" -le $((32 * 1024))
        done
    fi
elif [ "${REPROSIGN_REQUIRE_ALL:-0}" = 1 ]; then
    fail "AAVMF's store ($AAVMF, qemu-efi-aarch64) is not installed"
fi

if ! sanitized_build; then
    for cmd in st at; do
        small=$(cat "$WORK/$cmd-5000") large=$(cat "$WORK/$cmd-25000")
        per_file=$(((large - small) * 1024 / 20000))
        name=$([ $cmd = st ] && echo sign-template || echo attach-tree)
        check "$name at 25,000 files: $((large / 1024)) MiB, under 64" test "$large" -le $((64 * 1024))
        check "$name grows $per_file bytes a file from 5,000 to 25,000, at most 32" test "$per_file" -le 32
    done
fi
finish

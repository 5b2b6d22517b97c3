#!/bin/bash
# ctest-label: plain
# A .deb's data.tar is listed in memory (an index, for resolving paths),
# and a few MB of gzip can stand for hundreds of thousands of tar headers:
# a package over RS_DEB_INDEX_MAX_ENTRIES (500,000) entries, or whose names
# and link targets take over RS_DEB_INDEX_MAX_NAME_BYTES (24 MiB), is
# refused, naming the package and the limit, and nothing is left behind.
# At both limits at once the run signs, within 64 MiB. Before the limits,
# a 1.5 MB package of a million entries took sign-template to 104 MB.
# Under the sanitizers the peak measures their shadow memory, so there
# only the runs themselves are checked.
. "$TESTS_DIR/lib.sh"
need_tool python3
make_key db
python3 "$TESTS_DIR/tools/mkpe.py" "$WORK/one.efi" --sections 1 --section-size 512

cat >"$WORK/files.json" <<'JSON'
{"packages": {"many": {"trusted_certs": [], "files": [{"sig_type": "efi", "file": "usr/x.efi"}]}}}
JSON
# deb NAME COUNT NAME_LEN: pkgs-NAME/many_1_amd64.deb, COUNT + 2 entries,
# the image listed last so that the whole data.tar is indexed.
deb() {
    mkdir -p "$WORK/pkgs-$1"
    python3 "$TESTS_DIR/tools/many_entries_deb.py" "$WORK/pkgs-$1/many_1_amd64.deb" many "$2" "$3" \
        "$WORK/one.efi" usr/x.efi
}
refused() {   # refused NAME: sign-template over pkgs-NAME into out-NAME
    "$REPROSIGN" sign-template --quiet "$WORK/files.json" --packages "$WORK/pkgs-$1" \
        --key "$WORK/db.key" --cert "$WORK/db.crt" --output "$WORK/out-$1"
}

# At both limits: 499,998 names of 49 bytes (and their NULs), "usr" and
# "usr/x.efi": 500,000 entries, 24,999,914 bytes of names.
deb at 499998 49
check "a package at both limits (500,000 entries, 24.99 MB of names) is signed" \
    peak_kib "$WORK/peak" "$REPROSIGN" sign-template --quiet "$WORK/files.json" --packages "$WORK/pkgs-at" \
        --key "$WORK/db.key" --cert "$WORK/db.crt" --output "$WORK/out-at"
check "... its image's signature is there" test -s "$WORK/out-at/signatures/many/usr/x.efi.sig"
if sanitized_build; then
    echo "note: sanitized build: its peak memory is not measured"
else
    check "... within 64 MiB (peak $(cat "$WORK/peak") KiB)" test "$(cat "$WORK/peak")" -le $((64 * 1024))
fi
rm -rf "$WORK/pkgs-at" "$WORK/out-at"

deb entries 499999 49
refuses "one entry more is refused" "$WORK/out-entries" refused entries
check "... naming the package and the limit" grep -qF \
    "reprosign: $WORK/pkgs-entries/many_1_amd64.deb: data.tar lists more than 500000 entries, the limit" "$WORK/.err"
rm -rf "$WORK/pkgs-entries"

# 300,000 names of 90 bytes: 27.3 MB, past 24 MiB before the last entry.
deb names 300000 90
refuses "names over 24 MiB are refused" "$WORK/out-names" refused names
check "... naming the package and the limit" grep -qF \
    "reprosign: $WORK/pkgs-names/many_1_amd64.deb: data.tar's names take more than 25165824 bytes, the limit" \
    "$WORK/.err"
finish

#!/bin/bash
# Synthetic PE/COFF images covering the layouts real binaries vary in:
# PE32 and PE32+, four machines, trailing data, sizes not a multiple of 8,
# gaps between sections. sbsigntool is the oracle for every byte.
. "$TESTS_DIR/lib.sh"
need_tool sbsign; need_tool python3
make_key db
export SOURCE_DATE_EPOCH=1700000000
mkpe() { python3 "$TESTS_DIR/tools/mkpe.py" "$@"; }

cases=(
    "pe32plus-x86_64|--machine x86_64"
    "pe32-ia32|--pe32 --machine ia32"
    "pe32plus-aarch64|--machine aarch64"
    "pe32-arm|--pe32 --machine arm"
    "trailing-data|--trailing 1000"
    "unaligned-size|--odd-tail 3"
    "trailing-unaligned|--pe32 --machine ia32 --trailing 77"
    "section-gap|--gap 64"
    "gap-and-unaligned|--machine aarch64 --gap 24 --odd-tail 5"
    "one-section|--sections 1"
    "many-sections|--sections 40 --section-size 512"
)
for c in "${cases[@]}"; do
    name=${c%%|*}; opts=${c#*|}
    img=$WORK/$name.efi
    mkpe "$img" $opts
    sbsign --key "$WORK/db.key" --cert "$WORK/db.crt" --detached "$img" --output "$WORK/$name.sbsig" >/dev/null 2>&1
    cp "$img" "$WORK/$name.sbattach"; sbattach --attach "$WORK/$name.sbsig" "$WORK/$name.sbattach" >/dev/null 2>&1
    check "$name: attach of sbsign's signature equals sbattach" bash -c "
        '$REPROSIGN' attach '$WORK/$name.sbsig' '$img' --output '$WORK/$name.rs' 2>/dev/null && cmp -s '$WORK/$name.rs' '$WORK/$name.sbattach'"
    check "$name: reprosign signature passes sbverify" bash -c "
        '$REPROSIGN' sign --key '$WORK/db.key' --cert '$WORK/db.crt' '$img' --output '$WORK/$name.signed' &&
        sbverify --cert '$WORK/db.crt' '$WORK/$name.signed' >/dev/null 2>&1"
    check "$name: reprosign verify" "$REPROSIGN" verify "$WORK/$name.signed" --cert "$WORK/db.crt"
    check "$name: second signature is appended and verifies" bash -c "
        '$REPROSIGN' sign --key '$WORK/db.key' --cert '$WORK/db.crt' '$WORK/$name.signed' --output '$WORK/$name.two' &&
        [ \$('$REPROSIGN' list --json '$WORK/$name.two' | grep -c '\"index\"') -eq 2 ] && sbverify --cert '$WORK/db.crt' '$WORK/$name.two' >/dev/null 2>&1"
    check "$name: strip equals sbattach --remove" bash -c "
        cp '$WORK/$name.sbattach' '$WORK/$name.sbremove' && sbattach --remove '$WORK/$name.sbremove' >/dev/null 2>&1 &&
        '$REPROSIGN' strip '$WORK/$name.sbattach' --output '$WORK/$name.strip' && cmp -s '$WORK/$name.strip' '$WORK/$name.sbremove'"
    check "$name: digest is unchanged by signing" bash -c "
        [ \"\$('$REPROSIGN' digest '$img')\" = \"\$('$REPROSIGN' digest '$WORK/$name.signed')\" ]"
done
finish

#!/bin/bash
# Kernel module signatures against the kernel's own tools: real Debian
# modules round-trip byte for byte, `list` agrees with modinfo, and
# signing gives exactly what scripts/sign-file gives.
source "$(dirname "$0")/../lib.sh"

SIGN_FILE=/usr/lib/linux-kbuild-6.1/scripts/sign-file
need_tool "$SIGN_FILE"
need_tool modinfo
need_tool jq
need_fixtures kernel

# Every 30th module: ~38 of them, from all corners of the tree.
mapfile -t MODULES < <(find "$FIXTURES"/kernel/lib/modules/*/kernel -name '*.ko' | sort | awk 'NR % 30 == 1')
[ "${#MODULES[@]}" -ge 30 ] || skip "only ${#MODULES[@]} modules in the fixture"
echo "# ${#MODULES[@]} modules"
make_key test
make_key other

# list as "CN|serial or key id|hash", in modinfo's spelling.
list_as_modinfo() {
    "$REPROSIGN" list --json "$1" | jq -r '.signatures[0] |
        [(.issuer | capture("CN=(?<cn>[^,]*)").cn), (.serial // .key_id | ascii_upcase | [scan("..")] | join(":")),
         .digest_algorithm] | join("|")'
}
modinfo_sig() { echo "$(modinfo -F signer "$1")|$(modinfo -F sig_key "$1")|$(modinfo -F sig_hashalgo "$1")"; }

roundtrip_ok=0 list_ok=0 sign_ok=0
for m in "${MODULES[@]}"; do
    n=$(basename "$m" .ko)
    d=$WORK/m/$n; mkdir -p "$d"
    if "$REPROSIGN" detach "$m" --output "$d/orig.sig" && "$REPROSIGN" strip "$m" --output "$d/unsigned.ko" &&
        "$REPROSIGN" attach "$d/orig.sig" "$d/unsigned.ko" --output "$d/again.ko" && same_bytes "$d/again.ko" "$m"; then
        roundtrip_ok=$((roundtrip_ok + 1))
    else
        fail "$n: detach, strip, attach does not give the module back"
        continue
    fi
    if [ "$(list_as_modinfo "$m")" = "$(modinfo_sig "$m")" ]; then
        list_ok=$((list_ok + 1))
    else
        fail "$n: list says '$(list_as_modinfo "$m")', modinfo says '$(modinfo_sig "$m")'"
    fi
    all_same=1
    for hash in sha256 sha512; do
        for keyid in "" -k; do
            "$SIGN_FILE" $keyid "$hash" "$WORK/test.key" "$WORK/test.crt" "$d/unsigned.ko" "$d/ref.ko"
            "$REPROSIGN" sign --key "$WORK/test.key" --cert "$WORK/test.crt" --hash "$hash" \
                ${keyid:+--keyid} --output "$d/ours.ko" "$d/unsigned.ko" &&
                same_bytes "$d/ours.ko" "$d/ref.ko" || { all_same=0; fail "$n: sign $hash $keyid differs from sign-file"; }
        done
    done
    "$SIGN_FILE" -d sha256 "$WORK/test.key" "$WORK/test.crt" "$d/unsigned.ko"
    "$REPROSIGN" sign --detached --key "$WORK/test.key" --cert "$WORK/test.crt" --output "$d/ours.p7s" "$d/unsigned.ko" &&
        same_bytes "$d/ours.p7s" "$d/unsigned.ko.p7s" || { all_same=0; fail "$n: --detached differs from sign-file -d"; }
    [ "$all_same" = 1 ] && sign_ok=$((sign_ok + 1))
done
total=${#MODULES[@]}
[ "$roundtrip_ok" = "$total" ] && pass "detach, strip, attach reproduce all $total modules byte for byte"
[ "$list_ok" = "$total" ] && pass "list agrees with modinfo (signer, sig_key, sig_hashalgo) on all $total modules"
[ "$sign_ok" = "$total" ] && pass "sign (sha256, sha512, with and without --keyid) and --detached equal sign-file on all $total"

# One module in detail.
m=${MODULES[0]}
u=$WORK/u.ko
"$REPROSIGN" strip "$m" --output "$u"
"$SIGN_FILE" sha384 "$WORK/test.key" "$WORK/test.crt" "$u" "$WORK/ref384.ko"
"$REPROSIGN" sign --hash sha384 --key "$WORK/test.key" --cert "$WORK/test.crt" --output "$WORK/s384.ko" "$u"
check "sha384 equals sign-file" same_bytes "$WORK/s384.ko" "$WORK/ref384.ko"
"$REPROSIGN" sign --key "$WORK/test.key" --cert "$WORK/test.crt" --output "$WORK/s.ko" "$u"
"$REPROSIGN" sign --keyid --key "$WORK/test.key" --cert "$WORK/test.crt" --output "$WORK/sk.ko" "$u"
check "modinfo reads reprosign's signer" test "$(modinfo -F signer "$WORK/s.ko")" = "reprosign test test"
check "verify passes with the signer's certificate" "$REPROSIGN" verify "$WORK/s.ko" --cert "$WORK/test.crt"
check "verify finds a --keyid signer by subjectKeyIdentifier" "$REPROSIGN" verify "$WORK/sk.ko" --cert "$WORK/test.crt"
check "verify picks the signer among several certificates" \
    "$REPROSIGN" verify "$WORK/s.ko" --cert "$WORK/other.crt" --cert "$WORK/test.crt"
refuses "verify with another certificate" "" "$REPROSIGN" verify "$WORK/s.ko" --cert "$WORK/other.crt"
cp "$WORK/s.ko" "$WORK/flipped.ko"
printf '\xff' | dd of="$WORK/flipped.ko" bs=1 seek=100 conv=notrunc 2>/dev/null
refuses "verify of a module with one byte flipped" "" "$REPROSIGN" verify "$WORK/flipped.ko" --cert "$WORK/test.crt"
check "verify of the real module with its sha384 signature" "$REPROSIGN" verify "$WORK/s384.ko" --cert "$WORK/test.crt"

# attach: the signature must be the signer's over these very bytes.
"$REPROSIGN" detach "$WORK/s.ko" --output "$WORK/s.sig"
"$SIGN_FILE" -s "$WORK/s.sig" sha256 "$WORK/test.crt" "$u" "$WORK/ref-s.ko"
"$REPROSIGN" attach "$WORK/s.sig" "$u" --cert "$WORK/test.crt" --output "$WORK/att.ko"
check "attach --cert equals sign-file -s" same_bytes "$WORK/att.ko" "$WORK/ref-s.ko"
u2=$WORK/u2.ko
"$REPROSIGN" strip "${MODULES[1]}" --output "$u2"
refuses "attach --cert of another module's signature" "$WORK/x.ko" \
    "$REPROSIGN" attach "$WORK/s.sig" "$u2" --cert "$WORK/test.crt" --output "$WORK/x.ko"
refuses "attach --cert with the wrong certificate" "$WORK/x.ko" \
    "$REPROSIGN" attach "$WORK/s.sig" "$u" --cert "$WORK/other.crt" --output "$WORK/x.ko"
refuses "attach to a signed module" "$WORK/x.ko" \
    "$REPROSIGN" attach "$WORK/s.sig" "$WORK/s.ko" --output "$WORK/x.ko"
refuses "sign a signed module" "$WORK/x.ko" \
    "$REPROSIGN" sign --key "$WORK/test.key" --cert "$WORK/test.crt" --output "$WORK/x.ko" "$WORK/s.ko"

# Bad input: each one line, nothing written.
sig_len=$(tail -c 32 "$WORK/s.ko" | head -c 4 | od -An -tu1 | awk '{print $1*16777216 + $2*65536 + $3*256 + $4}')
size=$(stat -c %s "$WORK/s.ko")
head -c -10 "$WORK/s.ko" >"$WORK/bad-magic.ko"
head -c -30 "$WORK/s.ko" >"$WORK/bad-struct.ko"
cp "$WORK/s.ko" "$WORK/bad-len.ko"
printf '\x7f\xff\xff\xff' | dd of="$WORK/bad-len.ko" bs=1 seek=$((size - 32)) conv=notrunc 2>/dev/null
cp "$WORK/s.ko" "$WORK/bad-pad.ko"
printf '\x01' | dd of="$WORK/bad-pad.ko" bs=1 seek=$((size - 34)) conv=notrunc 2>/dev/null
cp "$WORK/s.ko" "$WORK/bad-cms.ko"
head -c "$sig_len" /dev/zero | tr '\0' 'Z' | dd of="$WORK/bad-cms.ko" bs=1 seek=$((size - 40 - sig_len)) conv=notrunc 2>/dev/null
head -c 4096 /dev/urandom >"$WORK/bad-notelf.ko"
xz -c "$u" >"$WORK/c.ko.xz"; zstd -q -c "$u" >"$WORK/c.ko.zst"; gzip -c "$u" >"$WORK/c.ko.gz"
for bad in bad-magic bad-struct bad-len bad-pad bad-notelf; do
    for op in list verify strip detach sign; do
        case $op in
        list) refuses "$bad: list" "" "$REPROSIGN" list "$WORK/$bad.ko" ;;
        verify) refuses "$bad: verify" "" "$REPROSIGN" verify "$WORK/$bad.ko" --cert "$WORK/test.crt" ;;
        strip) refuses "$bad: strip" "$WORK/out" "$REPROSIGN" strip "$WORK/$bad.ko" --output "$WORK/out" ;;
        detach) refuses "$bad: detach" "$WORK/out" "$REPROSIGN" detach "$WORK/$bad.ko" --output "$WORK/out" ;;
        sign) refuses "$bad: sign" "$WORK/out" "$REPROSIGN" sign --key "$WORK/test.key" --cert "$WORK/test.crt" \
            --output "$WORK/out" "$WORK/$bad.ko" ;;
        esac
    done
done
refuses "garbage CMS: list" "" "$REPROSIGN" list "$WORK/bad-cms.ko"
refuses "garbage CMS: verify" "" "$REPROSIGN" verify "$WORK/bad-cms.ko" --cert "$WORK/test.crt"
refuses "garbage CMS: detach" "$WORK/out" "$REPROSIGN" detach "$WORK/bad-cms.ko" --output "$WORK/out"
head -c 700 /dev/urandom >"$WORK/garbage.sig"
refuses "garbage CMS: attach" "$WORK/out" "$REPROSIGN" attach "$WORK/garbage.sig" "$u" --output "$WORK/out"
# sign-file appends to a module that is already signed; the kernel checks
# only the last signature, and reprosign refuses such a module outright.
cp "$WORK/s.ko" "$WORK/twice.ko"
"$SIGN_FILE" sha256 "$WORK/test.key" "$WORK/test.crt" "$WORK/twice.ko"
refuses "a module sign-file signed twice: list" "" "$REPROSIGN" list "$WORK/twice.ko"
grep -q 'signed twice' "$WORK/.err" || fail "twice.ko: the error does not say the module is signed twice"
refuses "a module sign-file signed twice: strip" "$WORK/out" "$REPROSIGN" strip "$WORK/twice.ko" --output "$WORK/out"
for c in xz zst gz; do
    refuses "$c-compressed module" "$WORK/out" "$REPROSIGN" sign --key "$WORK/test.key" --cert "$WORK/test.crt" \
        --output "$WORK/out" "$WORK/c.ko.$c"
    grep -q 'compressed kernel module: decompress it first' "$WORK/.err" || fail "$c: the error does not name the compression"
done
# What is only read, is read as the kernel and modinfo read it: a module
# compressed as trixie ships them (name.ko.xz), decompressed.
for c in xz zst gz; do
    case $c in xz) xz -c "$WORK/s.ko" ;; zst) zstd -q -c "$WORK/s.ko" ;; gz) gzip -n -c "$WORK/s.ko" ;; esac >"$WORK/s.ko.$c"
    # bookworm's kmod reads .ko.xz and .ko.zst itself, but has no zlib.
    if [ "$c" = gz ]; then want=$(modinfo_sig "$WORK/s.ko"); else want=$(modinfo_sig "$WORK/s.ko.$c"); fi
    got=$(list_as_modinfo "$WORK/s.ko.$c")
    check "$c-compressed signed module: list agrees with modinfo ($got)" \
        test -n "$got" -a "$got" = "$want" -a "$want" != "||"
    check "$c-compressed signed module: verify accepts its key" \
        "$REPROSIGN" verify "$WORK/s.ko.$c" --cert "$WORK/test.crt"
    refuses "$c-compressed signed module: verify refuses another key" "" \
        "$REPROSIGN" verify "$WORK/s.ko.$c" --cert "$WORK/other.crt"
    refuses "$c-compressed unsigned module: verify refuses it" "" \
        "$REPROSIGN" verify "$WORK/c.ko.$c" --cert "$WORK/test.crt"
done
head -c 200 "$WORK/s.ko.xz" >"$WORK/cut.ko.xz"
refuses "a truncated .ko.xz: verify names it and the reason" "" "$REPROSIGN" verify "$WORK/cut.ko.xz" --cert "$WORK/test.crt"
grep -q 'cut.ko.xz: decompressed: corrupt stream' "$WORK/.err" || fail "cut.ko.xz: $(cat "$WORK/.err")"
cp "$WORK/s.ko" "$WORK/plain.ko.xz"
refuses "a .ko.xz that is not compressed: list says so" "" "$REPROSIGN" list "$WORK/plain.ko.xz"
grep -q 'plain.ko.xz: not compressed with xz, zstd or gzip, as its name says' "$WORK/.err" ||
    fail "plain.ko.xz: $(cat "$WORK/.err")"
finish

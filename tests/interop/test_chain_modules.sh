#!/bin/bash
# chain --modules against Linux 6.1's module keyrings under lockdown, as
# Debian patches it: .machine (MokList), .platform (db), the build key
# (--kernel-keys, or read out of the kernel image as Linux builds it in),
# revocation by the module's SHA-256 in dbx or MokListX, a module changed
# after signing, compressed modules. The module is a small ELF relocatable
# object (tests/tools/mkko.py): the rules look at its signature and bytes,
# never at what it would do, so this runs without Debian's kernel
# (test_module and the boots take real ones). Each case names the rule the
# output must cite.
. "$TESTS_DIR/lib.sh"
need_tool python3; need_tool xz; need_tool zstd; need_tool gzip
. "$TESTS_DIR/interop/chain_rules_lib.sh"

python3 "$TESTS_DIR/tools/mkko.py" "$WORK/u.ko"
mkdir -p "$WORK/m-mok" "$WORK/m-db" "$WORK/m-none" "$WORK/m-foreign"
sign mok "$WORK/u.ko" "$WORK/m-mok/a.ko"
sign db "$WORK/u.ko" "$WORK/m-db/a.ko"
cp "$WORK/u.ko" "$WORK/m-none/a.ko"
sign other "$WORK/u.ko" "$WORK/m-foreign/a.ko"
CHAIN=("$WORK/shim.signed" "$WORK/grub.mok" "$WORK/kernel.signed")
accepted_with "modules: a MOK-signed module loads (.machine)" "modules .*: OK, 1 verified .*machine 1" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-mok"
accepted_with "modules: a db-signed module loads (.platform)" "modules .*: OK, 1 verified .*platform 1" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-db"
accepted_with "modules: the build key (--kernel-keys)" "modules .*: OK, 1 verified (.builtin_trusted_keys 1" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-foreign" \
    --kernel-keys "$WORK/other.crt"
# The build key, read out of the kernel image (the last stage) as Linux
# builds it in: a bzImage's compressed payload, or an arm64 Image, holds
# the certificate list of certs/system_certificates.S
# (tests/tools/mkbzimage.py).
bz() {  # bz NAME [payload options...]: $WORK/NAME.bz, signed by the vendor key
    local name=$1; shift
    python3 "$TESTS_DIR/tools/mkbzimage.py" payload "$WORK/$name.payload" "$@" &&
        mkpe "$WORK/$name.efi" --sections 1 --add-section .payload="$WORK/$name.payload" &&
        python3 "$TESTS_DIR/tools/mkbzimage.py" header "$WORK/$name.efi" "$WORK/$name.payload" ${BZ_HEADER:-} &&
        sign vendor "$WORK/$name.efi" "$WORK/$name.bz"
}
bz_chain() { "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "$WORK/shim.signed" "$WORK/grub.mok" "$WORK/$1.bz" --modules "$2" "${@:3}"; }
other_name=$(openssl x509 -in "$WORK/other.crt" -noout -ext subjectKeyIdentifier | tail -n 1 | tr -d ' :' | tr 'A-F' 'a-f')
for z in xz zstd gzip; do
    bz "bz-$z" --cert "$WORK/other.der" --compress "$z"
    accepted_with "modules: the build key read out of a $z-compressed kernel image (.builtin_trusted_keys)" \
        "kernel image .*bz-$z.bz: 'reprosign test other: $other_name'" bz_chain "bz-$z" "$WORK/m-foreign"
done
BZ_HEADER=--arm64 bz a64 --cert "$WORK/other.der" --compress none --align 256
accepted_with "modules: the build key read out of an arm64 Image (uncompressed; .align 8 is 256 bytes there)" \
    "kernel image .*a64.bz: 'reprosign test other: $other_name'" bz_chain a64 "$WORK/m-foreign"
BZ_HEADER=--riscv64 bz rv64 --cert "$WORK/other.der" --compress none --align 256
accepted_with "modules: the build key read out of a RISC-V Image (uncompressed)" \
    "kernel image .*rv64.bz: 'reprosign test other: $other_name'" bz_chain rv64 "$WORK/m-foreign"
# EFI zboot (Debian's loong64 kernels; arm64 and RISC-V elsewhere): the
# header gives the payload, compressed as the name it gives says.
for z in xz:xzkern zstd:zstd22 gzip:gzip; do
    BZ_HEADER="--zboot ${z#*:}" bz "zb-${z%:*}" --cert "$WORK/other.der" --compress "${z%:*}" --align 256
    accepted_with "modules: the build key read out of an EFI zboot image, ${z#*:}" \
        "kernel image .*zb-${z%:*}.bz: 'reprosign test other: $other_name'" bz_chain "zb-${z%:*}" "$WORK/m-foreign"
done
BZ_HEADER="--zboot lz4" bz zb-lz4 --cert "$WORK/other.der" --compress lz4
refused_with "kernel image: an EFI zboot payload compressed otherwise is refused, pointing at --kernel-keys" \
    "zb-lz4.bz: its kernel is compressed with neither xz, zstd nor gzip (it starts 02 21 4c 18): give its certificates with --kernel-keys" \
    bz_chain zb-lz4 "$WORK/m-foreign"
BZ_HEADER="--zboot zstd22 --payload-length 99999999" bz zb-past --cert "$WORK/other.der" --compress zstd
refused_with "kernel image: an EFI zboot payload past the end of the file is refused" \
    "zb-past.bz: its EFI zboot header's payload (100000003 bytes at [0-9]*) does not fit in its [0-9]* bytes" \
    bz_chain zb-past "$WORK/m-foreign"
BZ_HEADER="--zboot zstd22-with-a-name-too-long-for-it" bz zb-name --cert "$WORK/other.der" --compress zstd
refused_with "kernel image: an EFI zboot header whose compression's name is not terminated is refused" \
    "zb-name.bz: its EFI zboot header's compression type is not a string" bz_chain zb-name "$WORK/m-foreign"
BZ_HEADER="--zboot xzkern" bz zb-size --cert "$WORK/other.der" --corrupt wrong-size
refused_with "kernel image: an EFI zboot payload whose size disagrees with its size word is refused" \
    "zb-size.bz: its kernel decompressed to [0-9]* bytes where the image says" bz_chain zb-size "$WORK/m-foreign"
bz bz-two --cert "$WORK/db.der" --cert "$WORK/other.der"
accepted_with "modules: every certificate of the built-in list is a key" \
    "kernel image .*bz-two.bz: 'reprosign test db: [0-9a-f]*', 'reprosign test other: $other_name'" \
    bz_chain bz-two "$WORK/m-foreign"
refused_with "modules: --kernel-keys replaces the image's built-in keys" "a.ko: REFUSED.*in no keyring" \
    bz_chain bz-xz "$WORK/m-foreign" --kernel-keys "$WORK/db.crt"
bz bz-nosize --cert "$WORK/other.der" --corrupt no-size-word
refused_with "kernel image: certificates without their length word are no list" \
    "bz-nosize.bz: no built-in certificate list (system_certificate_list, at most 1048576 bytes) in the decompressed kernel" \
    bz_chain bz-nosize "$WORK/m-foreign"
bz bz-twolists --cert "$WORK/other.der" --corrupt two-lists
refused_with "kernel image: two certificate lists are refused" "bz-twolists.bz: two built-in certificate lists" \
    bz_chain bz-twolists "$WORK/m-foreign"
bz bz-size --cert "$WORK/other.der" --corrupt wrong-size
refused_with "kernel image: a payload whose size disagrees with the image's is refused" \
    "bz-size.bz: its kernel decompressed to [0-9]* bytes where the image says" bz_chain bz-size "$WORK/m-foreign"
bz bz-corrupt --cert "$WORK/other.der" --corrupt corrupt
refused_with "kernel image: a corrupt payload is refused" "bz-corrupt.bz: decompressed: corrupt stream: " \
    bz_chain bz-corrupt "$WORK/m-foreign"
bz bz-lz4 --cert "$WORK/other.der" --compress lz4
refused_with "kernel image: a payload compressed otherwise is refused, pointing at --kernel-keys" \
    "bz-lz4.bz: its kernel is compressed with neither xz, zstd nor gzip (it starts 02 21 4c 18): give its certificates with --kernel-keys" \
    bz_chain bz-lz4 "$WORK/m-foreign"
BZ_HEADER="--payload-length 99999999" bz bz-past --cert "$WORK/other.der"
refused_with "kernel image: a payload past the end of the file is refused" \
    "bz-past.bz: its setup header's payload (99999999 bytes at [0-9]*) does not fit in its [0-9]* bytes" \
    bz_chain bz-past "$WORK/m-foreign"
BZ_HEADER="--protocol 0x0206" bz bz-old --cert "$WORK/other.der"
refused_with "kernel image: boot protocol 2.06 has no payload fields" "bz-old.bz: boot protocol 2.06 has no payload fields" \
    bz_chain bz-old "$WORK/m-foreign"
bz bz-bomb --bomb 600
refused_with "kernel image: a payload that decompresses past the limit is refused, with the limit" \
    "bz-bomb.bz: decompressed: too large (over 536870912 bytes)" bz_chain bz-bomb "$WORK/m-foreign"
refused_with "modules: a last stage that is no kernel image leaves .builtin_trusted_keys empty, and says so" \
    "the last stage is no kernel image it can read, and no --kernel-keys" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-foreign"
refused_with "modules: unsigned is refused under lockdown" "LOCKDOWN_MODULE_SIGNATURE" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-none"
refused_with "modules: a foreign key is refused" "in no keyring" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-foreign"
# A module changed after signing: its key is found, the signature fails
# (-EKEYREJECTED), and that, not a missing key, is the reason.
mkdir -p "$WORK/m-changed" && cp "$WORK/m-mok/a.ko" "$WORK/m-changed/a.ko"
printf 'X' | dd of="$WORK/m-changed/a.ko" bs=1 seek=100 conv=notrunc status=none
refused_with "modules: a changed module is refused by its own key, not for a missing one" \
    "a.ko: REFUSED by the kernel: its signer's key is in .machine, but the signature does not verify with it (.*over the module bytes.*): Key was rejected by service" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-changed"
python3 "$TESTS_DIR/tools/esl-entry.py" file "$WORK/m-mok/a.ko" "$WORK/mod-hash.esl"
refused_with "modules: the module's SHA-256 in dbx revokes it" "is blacklisted" \
    "$REPROSIGN" chain "${DB[@]}" --dbx "$WORK/mod-hash.esl" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-mok"
refused_with "modules: the module's SHA-256 in MokListX revokes it" "is blacklisted" \
    "$REPROSIGN" chain "${DB[@]}" --mokx "$WORK/mod-hash.esl" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-mok"
# Compressed modules, as trixie ships them (name.ko.xz): Linux verifies the
# decompressed bytes, and so does chain, for each compression it takes.
mkdir -p "$WORK/m-zip" "$WORK/m-zip-none" "$WORK/m-bad-xz" "$WORK/m-fake-xz"
xz -c "$WORK/m-mok/a.ko" >"$WORK/m-zip/a.ko.xz"
zstd -q -c "$WORK/m-mok/a.ko" >"$WORK/m-zip/b.ko.zst"
gzip -n -c "$WORK/m-mok/a.ko" >"$WORK/m-zip/c.ko.gz"
accepted_with "modules: xz, zstd and gzip-compressed modules verify as the kernel decompresses them" \
    "modules .*: OK, 3 verified .*machine 3" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-zip"
xz -c "$WORK/u.ko" >"$WORK/m-zip-none/a.ko.xz"
refused_with "modules: an unsigned module is refused compressed too" "a.ko.xz: REFUSED.*LOCKDOWN_MODULE_SIGNATURE" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-zip-none"
refused_with "modules: the decompressed module's SHA-256 in dbx revokes the compressed one" "a.ko.xz: REFUSED.*is blacklisted" \
    "$REPROSIGN" chain "${DB[@]}" --dbx "$WORK/mod-hash.esl" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-zip"
head -c "$(($(stat -c %s "$WORK/m-zip/a.ko.xz") / 2))" "$WORK/m-zip/a.ko.xz" >"$WORK/m-bad-xz/a.ko.xz"
refused_with "modules: a truncated .ko.xz is refused, named" "m-bad-xz/a.ko.xz: REFUSED.*a.ko.xz: decompressed: corrupt stream: " \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-bad-xz"
mkdir -p "$WORK/m-bomb" && head -c 600M /dev/zero | xz -1 >"$WORK/m-bomb/a.ko.xz"
refused_with "modules: a .ko.xz that decompresses past the limit is refused, with the limit" \
    "m-bomb/a.ko.xz: REFUSED.*a.ko.xz: decompressed: too large (over 536870912 bytes)" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-bomb"
mkdir -p "$WORK/m-empty/sub" && cp "$WORK/m-mok/a.ko" "$WORK/m-empty/sub/a.ko.p7s"
refused_with "modules: a directory with no module in it fails, saying so (a mistyped path must not pass)" \
    "m-empty: FAILED, no kernel module (\*.ko, \*.ko.xz, \*.ko.zst, \*.ko.gz) under it" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-empty"
cp "$WORK/m-mok/a.ko" "$WORK/m-fake-xz/a.ko.xz"
refused_with "modules: a .ko.xz that is not compressed is refused" "a.ko.xz: REFUSED.*not compressed with xz, zstd or gzip" \
    "$REPROSIGN" chain "${DB[@]}" --mok "$WORK/mok.esl" "${CHAIN[@]}" --modules "$WORK/m-fake-xz"
finish

#!/bin/bash
# ctest-label: slow
# The rest of the boot matrix (test_boot_chain.sh has cases 1 to 6,
# test_boot_refusals.sh shim's hash in dbx and GRUB below the SbatLevel):
# own platform keys (7), the other refusals (8), and the points where
# shim, GRUB and the kernel differ from a plain db/dbx reading, each
# booted in QEMU + OVMF with reprosign chain's verdict compared.
. "$TESTS_DIR/lib.sh"
need_tool qemu-system-x86_64; need_tool mkfs.vfat; need_tool mcopy; need_tool python3; need_tool busybox
MSVARS=/usr/share/OVMF/OVMF_VARS_4M.ms.fd TEMPLATE=/usr/share/OVMF/OVMF_VARS_4M.fd
[ -r "$MSVARS" ] && [ -r "$TEMPLATE" ] || skip "ovmf is not installed"
need_fixtures bootchain
need_fixtures shim
. "$TESTS_DIR/tools/boot-chain.sh"
bookworm_amd64_chain
MODS=$(ls -d "$FIXTURES"/signed-kernel/lib/modules/*/kernel)
make_key PK; make_key KEK; make_key db; make_key other; make_key dbxed
sign() { "$REPROSIGN" sign --key "$WORK/$1.key" --cert "$WORK/$1.crt" "$2" --output "$3"; }
esl_entry() { python3 "$TESTS_DIR/tools/esl-entry.py" "$@"; }
python3 "$TESTS_DIR/tools/mkinitramfs.py" "$WORK/initrd.gz" "$(command -v busybox)"
bash "$TESTS_DIR/tools/vendor-cert.sh" "$SHIM_UNSIGNED" "$WORK/debian-ca.der"
openssl x509 -inform DER -in "$WORK/debian-ca.der" -out "$WORK/debian-ca.pem"

# Own platform keys: PK/KEK/db from efi enroll, optionally with a dbx.
own_vars() {  # own_vars OUT [DBX.esl]
    "$REPROSIGN" efi enroll --vars "$TEMPLATE" --pk "$WORK/PK.crt" --kek "$WORK/KEK.crt" --db "$WORK/db.crt" \
        ${2:+--dbx "$2"} --timestamp 1700000000 --output "$1"
}
sign db "$SHIM_UNSIGNED" "$WORK/shim.db"
own_vars "$WORK/own.fd"

# 7. Debian's shim-unsigned signed with the test db key boots Debian's GRUB
# and kernel.
chain_esp own "$WORK/shim.db" "$GRUB" "$KERNEL" "$WORK/initrd.gz"
# 8b. GRUB's hash in MokListX (8a, shim's hash in dbx, and 8c, GRUB below
# the SbatLevel, boot in test_boot_refusals.sh).
"$REPROSIGN" efi siglist --hash "$GRUB" --output "$WORK/grub-hash.esl"
"$REPROSIGN" efi shim-var --vars "$MSVARS" --name MokListX "$WORK/grub-hash.esl" --output "$WORK/vars-mokx.fd"
chain_esp mokx "$SHIM" "$GRUB" "$KERNEL" "$WORK/initrd.gz"
chain_boot own "$WORK/own.fd"; chain_boot mokx "$WORK/vars-mokx.fd"
expect_boot own booted "7. own PK/KEK/db: shim-unsigned signed by the test db key boots Debian's GRUB and kernel" \
    --vars "$WORK/own.fd" "$WORK/shim.db" "$GRUB" "$KERNEL"
expect_boot mokx denied "8. GRUB's hash in MokListX" --vars "$WORK/vars-mokx.fd" "$SHIM" "$GRUB" "$KERNEL"

# 8d. A kernel signed by a key nothing trusts; GRUB from db without shim.
"$REPROSIGN" strip "$KERNEL" --output "$WORK/vmlinuz.unsigned"
sign other "$WORK/vmlinuz.unsigned" "$WORK/vmlinuz.other"
chain_esp untrusted "$SHIM" "$GRUB" "$WORK/vmlinuz.other" "$WORK/initrd.gz"
"$REPROSIGN" strip "$GRUB" --output "$WORK/grub.unsigned"
sign db "$WORK/grub.unsigned" "$WORK/grub.db"
chain_esp noshim "$WORK/grub.db" "$WORK/grub.db" "$KERNEL" "$WORK/initrd.gz"
chain_boot untrusted "$MSVARS"; chain_boot noshim "$WORK/own.fd"
expect_boot untrusted denied "8. a kernel signed by a key nothing trusts" \
    --vars "$MSVARS" "$SHIM" "$GRUB" "$WORK/vmlinuz.other"
expect_boot noshim denied "GRUB started from db without shim refuses the kernel" \
    --vars "$WORK/own.fd" "$WORK/grub.db" "$KERNEL"

# One good signature is enough for shim: Debian's GRUB with a second
# signature whose certificate is in dbx. shim never reads dbx TBS hashes.
sign dbxed "$GRUB" "$WORK/grub.2sig"
"$REPROSIGN" efi siglist --cert "$WORK/dbxed.crt" --output "$WORK/dbxed.esl"
own_vars "$WORK/own-dbxed.fd" "$WORK/dbxed.esl"
esl_entry tbs "$WORK/debian-ca.pem" "$WORK/tbs.esl"
own_vars "$WORK/own-tbs.fd" "$WORK/tbs.esl"
chain_esp twosig "$WORK/shim.db" "$WORK/grub.2sig" "$KERNEL" "$WORK/initrd.gz"
chain_esp tbs "$WORK/shim.db" "$GRUB" "$KERNEL" "$WORK/initrd.gz"
chain_boot twosig "$WORK/own-dbxed.fd"; chain_boot tbs "$WORK/own-tbs.fd"
expect_boot twosig booted "shim: a second signature in dbx does not undo Debian's" \
    --vars "$WORK/own-dbxed.fd" "$WORK/shim.db" "$WORK/grub.2sig" "$KERNEL"
expect_boot tbs booted "shim: the Debian CA's TBS hash in dbx is not read" \
    --vars "$WORK/own-tbs.fd" "$WORK/shim.db" "$GRUB" "$KERNEL"

# shim checks SHA-1 Authenticode hashes against dbx; the kernel revokes a
# module by its SHA-256 in dbx.
"$REPROSIGN" efi siglist --sha1 --hash "$GRUB" --output "$WORK/grub-sha1.esl"
own_vars "$WORK/own-sha1.fd" "$WORK/grub-sha1.esl"
"$REPROSIGN" strip "$MODS/lib/crc7.ko" --output "$WORK/crc7.unsigned"
mkdir -p "$WORK/mods"
sign db "$WORK/crc7.unsigned" "$WORK/mods/crc7.ko"
esl_entry file "$WORK/mods/crc7.ko" "$WORK/crc7-hash.esl"
own_vars "$WORK/own-modhash.fd" "$WORK/crc7-hash.esl"
python3 "$TESTS_DIR/tools/mkinitramfs.py" "$WORK/initrd-mod.gz" "$(command -v busybox)" "$WORK/mods/crc7.ko"
chain_esp sha1 "$WORK/shim.db" "$GRUB" "$KERNEL" "$WORK/initrd.gz"
chain_esp modhash "$WORK/shim.db" "$GRUB" "$KERNEL" "$WORK/initrd-mod.gz"
chain_esp modplatform "$WORK/shim.db" "$GRUB" "$KERNEL" "$WORK/initrd-mod.gz"
chain_boot sha1 "$WORK/own-sha1.fd"; chain_boot modhash "$WORK/own-modhash.fd"
expect_boot sha1 denied "shim: GRUB's SHA-1 hash in dbx" --vars "$WORK/own-sha1.fd" "$WORK/shim.db" "$GRUB" "$KERNEL"
expect_boot modhash booted "the chain to the kernel holds with a module hash in dbx"
chain_boot modplatform "$WORK/own.fd"
expect_boot modplatform booted "the chain to the kernel holds (module signed by the db key)"

# The modules: the kernel's verdict and chain's.
module_agrees() {  # module_agrees BOOT VARS loaded|refused WHAT
    local chain=loaded
    "$REPROSIGN" chain --vars "$2" "$WORK/shim.db" "$GRUB" "$KERNEL" --modules "$WORK/mods" >"$WORK/mod.out" 2>&1 ||
        chain=refused
    if grep -a -q "REPROSIGN-MODULE crc7.ko: $3" "$WORK/boot-$1/serial.log" && [ "$chain" = "$3" ]; then
        pass "$4 (kernel and chain: $3)"
    else fail "$4: expected $3, chain $chain"; tr -d '\r' <"$WORK/boot-$1/serial.log" | grep -a "REPROSIGN-\|blacklist" |
        head -n 5 | sed 's/^/    /'; sed 's/^/    chain: /' "$WORK/mod.out"; fi
}
module_agrees modplatform "$WORK/own.fd" loaded "a module signed by a db key loads (.platform keyring)"
module_agrees modhash "$WORK/own-modhash.fd" refused "a module whose SHA-256 is in dbx is refused"
finish

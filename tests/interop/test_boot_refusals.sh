#!/bin/bash
# The firmware's and shim's own confirmation of two refusal rules, in the
# default run (the rest of the matrix is in test_boot_chain_slow.sh): each
# boot is refused before any kernel starts, so the pair costs about as
# much as one OVMF start.
#   - the firmware: shim's Authenticode hash in dbx (own PK/KEK/db/dbx);
#   - shim: GRUB's SBAT generation below the SbatLevel variable.
# The boot and reprosign chain must both refuse, and the same chain with
# the rule's entry absent must boot (chain's verdict only: no boot).
. "$TESTS_DIR/lib.sh"
need_tool qemu-system-x86_64; need_tool mkfs.vfat; need_tool mcopy; need_tool python3; need_tool busybox
MSVARS=/usr/share/OVMF/OVMF_VARS_4M.ms.fd TEMPLATE=/usr/share/OVMF/OVMF_VARS_4M.fd
[ -r "$MSVARS" ] && [ -r "$TEMPLATE" ] || skip "ovmf is not installed"
need_fixtures bootchain
need_fixtures shim
. "$TESTS_DIR/tools/boot-chain.sh"
bookworm_amd64_chain
make_key PK; make_key KEK; make_key db
# No kernel is reached: an empty file stands for the initramfs.
: >"$WORK/initrd.gz"

"$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$SHIM_UNSIGNED" --output "$WORK/shim.db"
"$REPROSIGN" efi siglist --hash "$WORK/shim.db" --output "$WORK/shim-hash.esl"
for dbx in "" "$WORK/shim-hash.esl"; do
    "$REPROSIGN" efi enroll --vars "$TEMPLATE" --pk "$WORK/PK.crt" --kek "$WORK/KEK.crt" --db "$WORK/db.crt" \
        ${dbx:+--dbx "$dbx"} --timestamp 1700000000 --output "$WORK/own${dbx:+-shimdbx}.fd"
done
printf 'sbat,1,2030010100\nshim,4\ngrub,6\n' >"$WORK/grub6.level"
"$REPROSIGN" efi shim-var --vars "$MSVARS" --name SbatLevel "$WORK/grub6.level" --output "$WORK/vars-sbat.fd"

chain_esp shimdbx "$WORK/shim.db" "$GRUB" "$KERNEL" "$WORK/initrd.gz"
chain_esp sbat "$SHIM" "$GRUB" "$KERNEL" "$WORK/initrd.gz"
chain_boot shimdbx "$WORK/own-shimdbx.fd"; chain_boot sbat "$WORK/vars-sbat.fd"
expect_boot shimdbx denied "the firmware refuses shim whose hash is in dbx" \
    --vars "$WORK/own-shimdbx.fd" "$WORK/shim.db" "$GRUB" "$KERNEL"
expect_boot sbat denied "shim refuses GRUB whose SBAT generation is below SbatLevel" \
    --vars "$WORK/vars-sbat.fd" "$SHIM" "$GRUB" "$KERNEL"
# The twins without the rule's entry: chain accepts them (their boots are
# test_boot_chain's case 1 and the slow test's case 7).
check "without shim's hash in dbx, chain accepts the same chain" \
    "$REPROSIGN" chain --vars "$WORK/own.fd" "$WORK/shim.db" "$GRUB" "$KERNEL"
check "without the SbatLevel, chain accepts the same chain" "$REPROSIGN" chain --vars "$MSVARS" "$SHIM" "$GRUB" "$KERNEL"
finish

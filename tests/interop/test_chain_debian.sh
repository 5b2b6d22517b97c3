#!/bin/bash
# Debian's real signed chain, as the README shows it: OVMF's Microsoft db
# -> shim-signed -> grub-efi-amd64-signed -> the signed vmlinuz of
# linux-image-amd64 (which has no .sbat: shim accepts it through
# shim_lock).
. "$TESTS_DIR/lib.sh"
need_tool jq
MSVARS=/usr/share/OVMF/OVMF_VARS_4M.ms.fd
[ -r "$MSVARS" ] || skip "ovmf is not installed"
need_fixtures bootchain
SHIM=$FIXTURES/root/shim-signed/usr/lib/shim/shimx64.efi.signed
GRUB=$FIXTURES/root/grub-efi-amd64-signed/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed
KERNEL=$(ls "$FIXTURES"/signed-kernel/boot/vmlinuz-* | head -n 1)

check "README example: Microsoft db -> shim-signed -> GRUB -> signed kernel" "$REPROSIGN" chain \
    --vars "$MSVARS" "$SHIM" "$GRUB" "$KERNEL"
check "the kernel passes SBAT through shim_lock, without .sbat" bash -c "
    '$REPROSIGN' chain --vars '$MSVARS' '$SHIM' '$GRUB' '$KERNEL' |
        grep -q '^stage 3 .*Debian Secure Boot CA.*no .sbat section, accepted through the shim_lock'"
check "shim is admitted by the Microsoft UEFI CA 2011 in db" bash -c "
    '$REPROSIGN' chain --vars '$MSVARS' '$SHIM' | grep -q '^stage 1 .*CN=Microsoft Corporation UEFI CA 2011'"
check "chain --json names each stage's verifier, rule and trust entry" bash -c "
    '$REPROSIGN' chain --json --vars '$MSVARS' '$SHIM' '$GRUB' '$KERNEL' >'$WORK/chain.json' &&
    jq -e '.valid and .stages[1].verifier == \"shim (loads it itself)\" and
        (.stages[2].rule | startswith(\"allowlist by certificate\")) and
        (.stages[2].accepted_by | contains(\"Debian Secure Boot CA\")) and (.sbat_level | contains(\"previous\"))' \
        '$WORK/chain.json' >/dev/null"
# Own keys from scratch, with and without Microsoft's: only with them does
# Debian's shim (signed by Microsoft's UEFI CA) boot.
"$REPROSIGN" efi keygen "$WORK/keys" >/dev/null
check "efi enroll --microsoft: own PK, KEK and db, with Microsoft's KEK and db lists" "$REPROSIGN" efi enroll \
    --vars /usr/share/OVMF/OVMF_VARS_4M.fd --pk "$WORK/keys/PK.crt" --kek "$WORK/keys/KEK.crt" --db "$WORK/keys/db.crt" \
    --microsoft --owner "$(cat "$WORK/keys/GUID")" --output "$WORK/own-ms.fd"
check "... takes only Microsoft's from OVMF's store (not Debian's KEK beside them)" bash -c "
    '$REPROSIGN' efi list --vars '$WORK/own-ms.fd' --name KEK | grep -c 'list [0-9]' | grep -qx 2 &&
    ! '$REPROSIGN' efi list --vars '$WORK/own-ms.fd' --name KEK | grep -q 'Debian'"
check "... and Debian's chain boots on it" "$REPROSIGN" chain --vars "$WORK/own-ms.fd" "$SHIM" "$GRUB" "$KERNEL"
"$REPROSIGN" efi enroll --vars /usr/share/OVMF/OVMF_VARS_4M.fd --pk "$WORK/keys/PK.crt" --kek "$WORK/keys/KEK.crt" \
    --db "$WORK/keys/db.crt" --output "$WORK/own.fd"
refuses "without --microsoft, Debian's shim is refused" "" "$REPROSIGN" chain --vars "$WORK/own.fd" "$SHIM"
"$REPROSIGN" efi db --vars "$MSVARS" --output "$WORK/ms-db.esl"
check "the same chain with db given as a file" "$REPROSIGN" chain --db "$WORK/ms-db.esl" "$SHIM" "$GRUB" "$KERNEL"

"$REPROSIGN" efi siglist --hash "$SHIM" --output "$WORK/shim-hash.esl"
"$REPROSIGN" efi siglist --hash "$GRUB" --output "$WORK/grub-hash.esl"
refuses "shim's hash in dbx" "" "$REPROSIGN" chain --db "$WORK/ms-db.esl" --dbx "$WORK/shim-hash.esl" \
    "$SHIM" "$GRUB" "$KERNEL"
refuses "GRUB's hash in MokListX" "" "$REPROSIGN" chain --db "$WORK/ms-db.esl" --mokx "$WORK/grub-hash.esl" \
    "$SHIM" "$GRUB" "$KERNEL"
printf 'sbat,1,2030010100\nshim,4\ngrub,6\n' >"$WORK/grub6.level"
refuses "GRUB below a newer SbatLevel" "" "$REPROSIGN" chain --db "$WORK/ms-db.esl" --sbat-level "$WORK/grub6.level" \
    "$SHIM" "$GRUB" "$KERNEL"
cp "$KERNEL" "$WORK/vmlinuz.changed"
printf '\x01' | dd of="$WORK/vmlinuz.changed" bs=1 seek=4096 conv=notrunc status=none
refuses "a kernel with one byte changed" "" "$REPROSIGN" chain --db "$WORK/ms-db.esl" "$SHIM" "$GRUB" \
    "$WORK/vmlinuz.changed"
refuses "GRUB from db without shim refuses the kernel" "" "$REPROSIGN" chain --db "$WORK/ms-db.esl" "$GRUB" "$KERNEL"
finish

#!/bin/bash
# ctest-label: slow
# trixie's kernel signing templates, amd64 and arm64 (3 and 4 flavours, the
# arm64 16k pages one among them; 550 MB of unsigned packages), as
# test_templates_trixie.sh takes the others: sign-template, dpkg-source -x,
# every image attached and verified, then both through the service. Then
# every signed kernel boots: trixie's systemd-boot, signed the same way,
# starts it under Secure Boot (OVMF for amd64, AAVMF for arm64) with a
# store of test keys from 'efi enroll', to the kernel's first log line; an
# unsigned kernel of each architecture is refused by systemd-boot.
. "$TESTS_DIR/lib.sh"
need_fixtures trixie-kernel
need_fixtures trixie
need_tool dpkg-source; need_tool sbverify; need_tool python3; need_tool reprepro
need_tool qemu-system-x86_64; need_tool qemu-system-aarch64; need_tool mkfs.vfat; need_tool mcopy
. "$TESTS_DIR/interop/templates_lib.sh"

trixie_templates trixie-kernel

make_key PK; make_key KEK
check "efi enroll: OVMF's store with the test keys" "$REPROSIGN" efi enroll --vars /usr/share/OVMF/OVMF_VARS_4M.fd \
    --pk "$WORK/PK.crt" --kek "$WORK/KEK.crt" --db "$WORK/db.crt" --timestamp 1700000000 --output "$WORK/vars-x64.fd"
check "efi enroll: AAVMF's store with the test keys" "$REPROSIGN" efi enroll --vars /usr/share/AAVMF/AAVMF_VARS.ms.fd \
    --pk "$WORK/PK.crt" --kek "$WORK/KEK.crt" --db "$WORK/db.crt" --timestamp 1700000000 --output "$WORK/vars-aa64.fd"
MARKER="Linux version 6."
# kernel_boots ARCH EFI-ARCH CONSOLE: each signed kernel of ARCH, two boots
# at a time, then one unsigned.
kernel_boots() {
    local arch=$1 k=$WORK/$1-linux-image-$1-signed-template sd entry=$WORK/$1.conf kernels=() i n
    template_checks "$FIXTURES/trixie/debs" "$arch" "systemd-boot-efi-$arch-signed-template"
    sd=$(ls "$WORK/$arch-systemd-boot-efi-$arch-signed-template/signed-systemd-boot-efi/usr/lib/systemd/boot/efi/"*.efi)
    UEFI_ARCH=$2
    . "$TESTS_DIR/tools/uefi-boot.sh"
    printf 'timeout 0\ndefault k.conf\n' >"$WORK/loader.conf"
    printf 'title trixie\nlinux /vmlinuz\noptions console=%s panic=-1\n' "$3" >"$entry"
    mapfile -t kernels < <(ls "$k"/signed-*/boot/vmlinuz-*)
    for ((i = 0; i < ${#kernels[@]}; i += 2)); do
        for n in "${kernels[@]:i:2}"; do
            boot "$(basename "$n")" "$sd" "$WORK/vars-$2.fd" "/loader/loader.conf=$WORK/loader.conf" \
                "/loader/entries/k.conf=$entry" "/vmlinuz=$n"
        done
        for n in "${kernels[@]:i:2}"; do
            expect "$(basename "$n")" ran "$arch: systemd-boot starts $(basename "$n"), signed through the template"
        done
    done
    n=$(ls "$k"/root-*/boot/vmlinuz-* | head -n 1)
    boot "unsigned-$arch" "$sd" "$WORK/vars-$2.fd" "/loader/loader.conf=$WORK/loader.conf" \
        "/loader/entries/k.conf=$entry" "/vmlinuz=$n"
    expect "unsigned-$arch" denied "$arch: systemd-boot refuses the unsigned $(basename "$n")"
}
kernel_boots amd64 x64 ttyS0
kernel_boots arm64 aa64 ttyAMA0
finish

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

release_templates trixie trixie-kernel

test_key_stores
MARKER="Linux version 6." RELEASE=trixie
template_kernels_boot amd64 x64 ttyS0 linux-image-amd64-signed-template 'boot/vmlinuz-*'
template_kernels_boot arm64 aa64 ttyAMA0 linux-image-arm64-signed-template 'boot/vmlinuz-*'
finish

#!/bin/bash
# ctest-label: slow
# forky's signing templates on every architecture that has them, as
# Debian's testing release has them now: the kernel's is
# linux-signed-ARCH-template (linux-image-ARCH-signed-template until
# trixie), and the images it lists, vmlinuz.unsigned under /usr/lib/modules,
# come in packages of their own (linux-binary-unsigned-*): three flavours
# on amd64, four on arm64. Each template, with GRUB's, shim's,
# systemd-boot's and fwupd's (i386: ia32 GRUB's and fwupd's), at its real
# size with its real unsigned packages read as .debs: sign-template,
# dpkg-source -x, every signature attached and verified, then all twelve
# through one service pass into reprepro. Then each of the seven kernels
# signed through the templates is started by forky's systemd-boot, signed
# through its own, under Secure Boot (OVMF for amd64, AAVMF for arm64)
# with a store of test keys, to the kernel's first log line; an unsigned
# image of each architecture is refused.
. "$TESTS_DIR/lib.sh"
need_fixtures forky-templates
need_tool dpkg-source; need_tool sbverify; need_tool python3; need_tool reprepro
need_tool qemu-system-x86_64; need_tool qemu-system-aarch64; need_tool mkfs.vfat; need_tool mcopy
. "$TESTS_DIR/interop/templates_lib.sh"

release_templates forky templates

test_key_stores
MARKER="Linux version" RELEASE=forky
template_kernels_boot amd64 x64 ttyS0 linux-signed-amd64-template 'usr/lib/modules/*/vmlinuz.unsigned'
template_kernels_boot arm64 aa64 ttyAMA0 linux-signed-arm64-template 'usr/lib/modules/*/vmlinuz.unsigned'
finish

#!/bin/bash
# Builds tests/tools/efi-hello.c into an x86_64 EFI application with
# gnu-efi: build-efi-hello.sh OUT.efi [MARKER]
# MARKER replaces the printed text, so tests can tell images apart.
set -euo pipefail
out=$1 marker=${2:-REPROSIGN-HELLO-RAN}
src=$(dirname "$0")/efi-hello.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed "s/REPROSIGN-HELLO-RAN/$marker/" "$src" >"$tmp/hello.c"
gcc -I/usr/include/efi -I/usr/include/efi/x86_64 -DEFI_FUNCTION_WRAPPER -fpic -fshort-wchar \
    -fno-stack-protector -fno-strict-aliasing -ffreestanding -mno-red-zone -maccumulate-outgoing-args \
    -Wall -c "$tmp/hello.c" -o "$tmp/hello.o"
ld -nostdlib -znocombreloc -shared -Bsymbolic -T /usr/lib/elf_x86_64_efi.lds \
    /usr/lib/crt0-efi-x86_64.o "$tmp/hello.o" -o "$tmp/hello.so" -L/usr/lib -lefi -lgnuefi
objcopy -j .text -j .sdata -j .data -j .dynamic -j .dynsym -j .rel -j .rela -j .reloc \
    --target efi-app-x86_64 --subsystem=10 "$tmp/hello.so" "$out"

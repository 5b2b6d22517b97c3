#!/usr/bin/env python3
"""A small unsigned kernel module, for tests that need no real one: an ELF64
little-endian relocatable object (ET_REL, x86-64) with one section of data
and its section header table, nothing after it. reprosign takes it as a
module (formats/module: ELF magic, ET_REL, every byte inside a section or
the header table); the kernel would not load it, and no test asks it to.

    mkko.py OUT.ko [--fill BYTE] [--size N]

--fill sets the section's bytes (two modules that differ), --size its length
(default 64)."""
import argparse
import struct


def module(fill, size):
    ehdr = bytearray(64)
    ehdr[0:7] = b"\x7fELF\x02\x01\x01"                 # ELFCLASS64, little-endian, EV_CURRENT
    shoff = 64 + size
    struct.pack_into("<HHI", ehdr, 16, 1, 62, 1)        # ET_REL, EM_X86_64, EV_CURRENT
    struct.pack_into("<Q", ehdr, 0x28, shoff)           # e_shoff
    struct.pack_into("<HHHHHH", ehdr, 0x34, 64, 0, 0, 64, 2, 0)  # ehsize, phent, phnum, shentsize, shnum, shstrndx
    null = bytes(64)
    text = struct.pack("<IIQQQQIIQQ", 0, 1, 6, 0, 64, size, 0, 0, 16, 0)  # SHT_PROGBITS, ALLOC|EXECINSTR
    return bytes(ehdr) + bytes([fill]) * size + null + text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--fill", type=lambda s: int(s, 0), default=0x90)
    ap.add_argument("--size", type=int, default=64)
    a = ap.parse_args()
    with open(a.out, "wb") as f:
        f.write(module(a.fill, a.size))


if __name__ == "__main__":
    main()

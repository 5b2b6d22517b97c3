#!/usr/bin/env python3
"""Changes what a PE image's sections are called, as an attacker hiding
shim's .vendor_cert would (a few bytes of the section table):

    pe-section.py rename IN OUT NAME NEW
        the first section called NAME gets NEW (at most 8 bytes, or "/N")
        in its header's name field
    pe-section.py decoy IN OUT NAME VICTIM
        the section called VICTIM is called NAME too (its name field is
        copied, so a long name keeps its string table entry), and its first
        16 bytes become zeros: an empty struct cert_table. Put before NAME
        in the table, it is the one a lookup by name finds.

Long names ("/N") are read from the COFF string table, as GNU ld writes
.vendor_cert in shim."""
import struct
import sys


def headers(img):
    lfanew = struct.unpack_from("<I", img, 0x3C)[0]
    # COFF header: Machine, NumberOfSections, TimeDateStamp, PointerToSymbolTable,
    # NumberOfSymbols, SizeOfOptionalHeader; a symbol is 18 bytes.
    _, count, _, symtab, nsyms, opt = struct.unpack_from("<HHIIIH", img, lfanew + 4)
    table = lfanew + 24 + opt
    strtab = symtab + 18 * nsyms
    return [table + 40 * i for i in range(count)], strtab


def name_of(img, off, strtab):
    field = bytes(img[off:off + 8])
    if field.startswith(b"/"):
        start = strtab + int(field[1:].rstrip(b"\0"))
        return bytes(img[start:img.index(b"\0", start)]).decode()
    return field.rstrip(b"\0").decode()


def find(img, name):
    offs, strtab = headers(img)
    for off in offs:
        if name_of(img, off, strtab) == name:
            return off
    sys.exit("pe-section: no section called %s" % name)


def main():
    op, src, out, name, arg = sys.argv[1:6]
    img = bytearray(open(src, "rb").read())
    target = find(img, name)
    if op == "rename":
        new = arg.encode()
        assert len(new) <= 8
        img[target:target + 8] = new.ljust(8, b"\0")
    elif op == "decoy":
        victim = find(img, arg)
        img[victim:victim + 8] = img[target:target + 8]
        raw_off = struct.unpack_from("<I", img, victim + 20)[0]
        img[raw_off:raw_off + 16] = bytes(16)
    else:
        sys.exit("pe-section: unknown operation %s" % op)
    open(out, "wb").write(img)


main()

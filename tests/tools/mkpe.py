#!/usr/bin/env python3
"""Builds small synthetic PE/COFF images for the tests, and malformed ones.

    mkpe.py OUT [--pe32] [--machine x86_64|ia32|aarch64|arm] [--sections N]
                [--section-size BYTES] [--gap BYTES] [--trailing BYTES]
                [--odd-tail BYTES] [--corrupt KIND] [--add-section NAME=FILE]...

The image is structurally valid (DOS stub, PE header, optional header with
16 data directories, N sections of raw data) so peers such as sbsign accept
it; --corrupt then breaks one thing on purpose (see CORRUPTIONS).
--add-section appends a section holding FILE's bytes after the generated
ones; a NAME longer than 8 bytes goes to a COFF string table at the end of
the file, as GNU ld writes .vendor_cert and .sbatlevel in shim."""

import argparse
import struct
import sys

MACHINES = {"x86_64": 0x8664, "ia32": 0x14C, "aarch64": 0xAA64, "arm": 0x1C2}
FILE_ALIGN = 0x200
SECTION_ALIGN = 0x1000
LFANEW = 0x80


def optional_header(pe32, size_of_image, size_of_headers, entry):
    magic = 0x10B if pe32 else 0x20B
    std = struct.pack("<HBBIIIII", magic, 2, 30, 0, 0, 0, entry, 0x1000)
    std += struct.pack("<I", 0x1000) if pe32 else b""       # BaseOfData
    base = struct.pack("<I", 0x400000) if pe32 else struct.pack("<Q", 0x140000000)
    win = base + struct.pack("<IIHHHHHHIIIIHH", SECTION_ALIGN, FILE_ALIGN, 0, 0, 0, 0, 0, 0, 0,
                             size_of_image, size_of_headers, 0, 10, 0)
    stack = struct.pack("<IIIIII" if pe32 else "<QQQQII", 0x100000, 0x1000, 0x100000, 0x1000, 0, 16)
    return std + win + stack + b"\0" * (16 * 8)


def extra_sections(specs):
    """[(name, data)] from NAME=FILE arguments."""
    out = []
    for spec in specs or []:
        name, _, path = spec.partition("=")
        with open(path, "rb") as f:
            out.append((name.encode(), f.read()))
    return out


def add_extra(extra, headers, body, off, first_index, strtab):
    for i, (name, data) in enumerate(extra):
        raw = (len(data) + FILE_ALIGN - 1) // FILE_ALIGN * FILE_ALIGN
        if len(name) > 8:
            field = b"/%d" % (4 + len(strtab))
            strtab += name + b"\0"
        else:
            field = name
        headers.append(struct.pack("<8sIIIIIIHHI", field, len(data), SECTION_ALIGN * (first_index + i + 1),
                                   raw, off, 0, 0, 0, 0, 0x40000040))
        body += data + b"\0" * (raw - len(data))
        off += raw
    return off


def build(args):
    pe32 = args.pe32
    machine = MACHINES[args.machine]
    extra = extra_sections(args.add_section)
    nsec = args.sections
    opt = optional_header(pe32, 0, 0, 0)
    table = LFANEW + 24 + len(opt)
    size_of_headers = (table + 40 * (nsec + len(extra)) + FILE_ALIGN - 1) // FILE_ALIGN * FILE_ALIGN
    body, headers = bytearray(), []
    off = size_of_headers
    for i in range(nsec):
        raw = args.section_size
        data = bytes(((i * 7 + j * 13) & 0xFF) for j in range(raw))
        headers.append(struct.pack("<8sIIIIIIHHI", b".s%d" % i, raw, SECTION_ALIGN * (i + 1), raw, off,
                                   0, 0, 0, 0, 0x60000020))
        body += data
        off += raw
        if args.gap and i == 0:
            body += b"\xAA" * args.gap
            off += args.gap
    strtab = bytearray()
    off = add_extra(extra, headers, body, off, nsec, strtab)
    total = nsec + len(extra)
    opt = optional_header(pe32, SECTION_ALIGN * (total + 1), size_of_headers, SECTION_ALIGN)
    tail = args.trailing + args.odd_tail
    symtab = off + tail if strtab else 0
    coff = struct.pack("<HHIIIHH", machine, total, 0, symtab, 0, len(opt), 0x0202 if not pe32 else 0x0102)
    dos = bytearray(LFANEW)
    dos[0:2] = b"MZ"
    struct.pack_into("<I", dos, 0x3C, LFANEW)
    img = bytearray(dos + b"PE\0\0" + coff + opt + b"".join(headers))
    img += b"\0" * (size_of_headers - len(img))
    img += body
    img += bytes((0x5A ^ (j & 0xFF)) for j in range(args.trailing))
    img += b"\x11" * args.odd_tail
    if strtab:
        img += struct.pack("<I", 4 + len(strtab)) + strtab
    return img, table, pe32


def opt_offset(pe32, field):
    """File offset of an optional-header field."""
    base = LFANEW + 24
    fields = {"SizeOfHeaders": 60, "NumberOfRvaAndSizes": 92 if pe32 else 108,
              "CertDir": (96 if pe32 else 112) + 4 * 8}
    return base + fields[field]


def corrupt(img, kind, table, pe32):
    if kind == "truncated":
        return img[:200]
    if kind == "tiny":
        return img[:40]
    if kind == "lfanew-past-eof":
        struct.pack_into("<I", img, 0x3C, len(img) + 4096)
    elif kind == "bad-pe-signature":
        img[LFANEW:LFANEW + 4] = b"PX\0\0"
    elif kind == "no-cert-dir":
        struct.pack_into("<I", img, opt_offset(pe32, "NumberOfRvaAndSizes"), 4)
    elif kind == "huge-section-count":
        struct.pack_into("<H", img, LFANEW + 6, 0xFFFF)
    elif kind == "section-past-eof":
        struct.pack_into("<I", img, table + 20, len(img) - 16)      # PointerToRawData
    elif kind == "headers-past-eof":
        struct.pack_into("<I", img, opt_offset(pe32, "SizeOfHeaders"), len(img) + 8)
    elif kind == "cert-table-past-eof":
        struct.pack_into("<II", img, opt_offset(pe32, "CertDir"), len(img) - 8, 64)
    elif kind == "cert-table-not-at-end":
        struct.pack_into("<II", img, opt_offset(pe32, "CertDir"), len(img) - 64, 16)
    elif kind == "cert-entry-zero-length":
        n = len(img)
        img += struct.pack("<IHH", 0, 0x200, 2) + b"\0" * 8
        struct.pack_into("<II", img, opt_offset(pe32, "CertDir"), n, 16)
    elif kind == "cert-entry-huge-length":
        n = len(img)
        img += struct.pack("<IHH", 0x7FFFFFFF, 0x200, 2) + b"\0" * 8
        struct.pack_into("<II", img, opt_offset(pe32, "CertDir"), n, 16)
    elif kind == "garbage-signature":
        n = len(img)
        junk = bytes((j * 31 + 7) & 0xFF for j in range(600))
        img += struct.pack("<IHH", 8 + len(junk), 0x200, 2) + junk
        struct.pack_into("<II", img, opt_offset(pe32, "CertDir"), n, 8 + len(junk))
    elif kind == "bad-optional-magic":
        struct.pack_into("<H", img, LFANEW + 24, 0x1234)
    elif kind == "unknown-machine":
        struct.pack_into("<H", img, LFANEW + 4, 0x1234)
    else:
        sys.exit("mkpe: unknown corruption " + kind)
    return img


CORRUPTIONS = ["truncated", "tiny", "lfanew-past-eof", "bad-pe-signature", "no-cert-dir",
               "huge-section-count", "section-past-eof", "headers-past-eof", "cert-table-past-eof",
               "cert-table-not-at-end", "cert-entry-zero-length", "cert-entry-huge-length",
               "garbage-signature", "bad-optional-magic", "unknown-machine"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--pe32", action="store_true")
    ap.add_argument("--machine", default="x86_64", choices=MACHINES)
    ap.add_argument("--sections", type=int, default=3)
    ap.add_argument("--section-size", type=int, default=FILE_ALIGN * 2)
    ap.add_argument("--gap", type=int, default=0)
    ap.add_argument("--trailing", type=int, default=0)
    ap.add_argument("--odd-tail", type=int, default=0)
    ap.add_argument("--corrupt", choices=CORRUPTIONS + ["list"])
    ap.add_argument("--add-section", action="append", metavar="NAME=FILE")
    args = ap.parse_args()
    if args.corrupt == "list":
        print("\n".join(CORRUPTIONS))
        return
    img, table, pe32 = build(args)
    if args.corrupt:
        img = corrupt(img, args.corrupt, table, pe32)
    with open(args.out, "wb") as f:
        f.write(img)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Synthetic kernel images (x86 bzImage, arm64 Image) for the tests, and malformed ones.

    mkbzimage.py payload OUT [--cert DER]... [--compress xz|zstd|gzip|lz4|none]
                 [--filler BYTES] [--align 8|256] [--corrupt KIND] [--bomb MIB]
    mkbzimage.py header IMAGE.efi PAYLOAD [--protocol 0x20f] [--payload-length N]
    mkbzimage.py header IMAGE.efi PAYLOAD --arm64|--riscv64
    mkbzimage.py header IMAGE.efi PAYLOAD --zboot TYPE [--payload-length N]

`payload` writes a stand-in for a kernel's compressed payload: filler,
then the certificates laid out as certs/system_certificates.S lays them
out (the DER certificates back to back, zeros to 8 bytes, their length as
a little-endian quad, then module_cert_size), then more filler; compressed
as arch/x86/boot/compressed/Makefile does (xz and zstd followed by the
decompressed size as 4 little-endian bytes, which gzip has itself).
KIND breaks one thing: no-size-word (the length word is missing),
two-lists, wrong-size (the appended size is off by one), corrupt (bytes in
the middle of the stream changed). --bomb writes MIB MiB of zeros, gzip'd.

With --align 256 the list is laid out as on arm64, where `.align 8` means
2^8 bytes.

`header --arm64` makes a PE image an arm64 Image instead: the magic
"ARM\x64" at 0x38, the kernel (an uncompressed payload) in its sections;
`--riscv64` a RISC-V Image, "RSC\x05" at 0x38. `--zboot TYPE` makes it an
EFI zboot image (drivers/firmware/efi/libstub/zboot-header.S): "zimg" at
4, the offset and size of its .payload section's data, TYPE (gzip, xzkern,
zstd22...) as the compression's name; the size leaves out the 4-byte size
word at the end of the payload, unless TYPE is gzip, as Makefile.zboot
does. A TYPE of 24 characters or more is not terminated within the header.
Otherwise `header` makes a PE image (tests/tools/mkpe.py, with few enough sections
that its headers end before 0x1f1) a bzImage: it writes the setup header
(boot_flag, "HdrS", the protocol version, setup_sects, payload_offset and
payload_length) so that the payload is the raw data of its section named
.payload."""

import argparse
import gzip
import lzma
import struct
import subprocess
import sys
import zlib


def cert_list(ders, align):
    body = b"".join(ders)
    pad = b"\0" * (-len(body) % align)
    return body + pad + struct.pack("<QQ", len(body), len(ders[0]) if ders else 0)


def vmlinux(ders, corrupt, filler_size, align):
    # Filler with stray SEQUENCE headers in it, as real kernels have.
    filler = bytes((i * 37 + 11) % 251 for i in range(filler_size)) + b"\x30\x82\x01\x00" * 8
    listed = cert_list(ders, align)
    if corrupt == "no-size-word":
        listed = b"".join(ders) + b"\x55" * 16
    head = b"\x7fELF" + filler
    head += b"\0" * (-len(head) % align)      # the list starts aligned, as .align puts it
    data = head + listed + filler
    if corrupt == "two-lists":
        data += b"\0" * (-len(data) % align) + cert_list(ders, align) + filler
    return data


def compress(data, method):
    size = struct.pack("<I", len(data) & 0xFFFFFFFF)
    if method == "gzip":
        return gzip.compress(data, mtime=0)
    if method == "xz":
        return lzma.compress(data, check=lzma.CHECK_CRC32) + size
    if method == "zstd":
        return subprocess.run(["zstd", "-q", "-c"], input=data, check=True, capture_output=True).stdout + size
    return b"\x02\x21\x4c\x18" + data[:64] + size          # lz4's magic: a method not read


def bomb(out, mib):
    z = zlib.compressobj(1, zlib.DEFLATED, 31)
    chunk = b"\0" * (1 << 20)
    with open(out, "wb") as f:
        for _ in range(mib):
            f.write(z.compress(chunk))
        f.write(z.flush())


def payload(args):
    if args.bomb:
        return bomb(args.out, args.bomb)
    ders = [open(p, "rb").read() for p in args.cert]
    data = vmlinux(ders, args.corrupt, args.filler, args.align)
    if args.compress == "none":
        return open(args.out, "wb").write(data)
    data = compress(data, args.compress)
    if args.corrupt == "wrong-size":
        data = data[:-4] + struct.pack("<I", struct.unpack("<I", data[-4:])[0] + 1)
    if args.corrupt == "corrupt":
        mid = len(data) // 2
        data = data[:mid] + bytes(b ^ 0xFF for b in data[mid:mid + 64]) + data[mid + 64:]
    open(args.out, "wb").write(data)


def payload_section(img):
    """The PE section table's end, and the .payload section's file offset."""
    pe = struct.unpack_from("<I", img, 0x3C)[0]
    nsec, opt_size = struct.unpack_from("<H", img, pe + 6)[0], struct.unpack_from("<H", img, pe + 20)[0]
    table = pe + 24 + opt_size
    for i in range(nsec):
        name, _, _, raw_size, raw_off = struct.unpack_from("<8sIIII", img, table + 40 * i)
        if name.rstrip(b"\0") == b".payload":
            return table + 40 * nsec, raw_off
    sys.exit("mkbzimage: no .payload section")


def zboot(img, args):
    _, raw_off = payload_section(img)
    size = len(open(args.payload, "rb").read()) - (0 if args.zboot == "gzip" else 4)
    if args.payload_length is not None:
        size = args.payload_length
    img[4:8] = b"zimg"
    struct.pack_into("<IIII", img, 8, raw_off, size, 0, 0)
    img[0x18:0x38] = args.zboot.encode()[:32].ljust(32, b"\0")
    struct.pack_into("<I", img, 0x38, 0x818223CD)          # LINUX_PE_MAGIC


def header(args):
    img = bytearray(open(args.image, "rb").read())
    if args.arm64 or args.riscv64:
        img[0x38:0x3C] = b"ARM\x64" if args.arm64 else b"RSC\x05"    # the Image header's magic
        return open(args.image, "wb").write(img)
    if args.zboot:
        zboot(img, args)
        return open(args.image, "wb").write(img)
    table_end, raw_off = payload_section(img)
    if table_end > 0x1F1:
        sys.exit("mkbzimage: the PE headers reach the setup header at 0x1f1; use fewer sections")
    setup_sects = raw_off // 512 - 1
    if setup_sects < 1:
        sys.exit("mkbzimage: the payload starts too early")
    img[0x1F1] = setup_sects
    struct.pack_into("<H", img, 0x1FE, 0xAA55)
    img[0x202:0x206] = b"HdrS"
    struct.pack_into("<H", img, 0x206, int(args.protocol, 0))
    length = args.payload_length if args.payload_length is not None else len(open(args.payload, "rb").read())
    struct.pack_into("<II", img, 0x248, raw_off - (setup_sects + 1) * 512, length)
    open(args.image, "wb").write(img)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("payload")
    p.add_argument("out")
    p.add_argument("--cert", action="append", default=[])
    p.add_argument("--compress", default="xz", choices=["xz", "zstd", "gzip", "lz4", "none"])
    p.add_argument("--filler", type=int, default=40000, help="bytes of filler either side of the list")
    p.add_argument("--align", type=int, default=8, help="what .align 8 means: 8 (x86) or 256 (arm64)")
    p.add_argument("--corrupt", choices=["no-size-word", "two-lists", "wrong-size", "corrupt"])
    p.add_argument("--bomb", type=int)
    h = sub.add_parser("header")
    h.add_argument("image")
    h.add_argument("payload", help="the payload file, for its length")
    h.add_argument("--protocol", default="0x020f")
    h.add_argument("--payload-length", type=int)
    h.add_argument("--arm64", action="store_true", help="an arm64 Image: the magic, the kernel uncompressed")
    h.add_argument("--riscv64", action="store_true", help="a RISC-V Image: the magic, the kernel uncompressed")
    h.add_argument("--zboot", metavar="TYPE", help="an EFI zboot image whose payload is compressed as TYPE")
    args = ap.parse_args()
    payload(args) if args.cmd == "payload" else header(args)


if __name__ == "__main__":
    main()

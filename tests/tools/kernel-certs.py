#!/usr/bin/env python3
"""The X.509 certificates built into a Linux kernel image (its
.builtin_trusted_keys: on Debian since trixie, the key made for that build,
which signed every module), as PEM, for `reprosign chain --kernel-keys`.

    kernel-certs.py VMLINUZ OUT.pem

VMLINUZ is an x86 bzImage: its setup header gives the compressed payload
(boot protocol 2.08: payload_offset, payload_length), decompressed by zstd,
xz or gzip; the certificates are the DER ones OpenSSL parses in vmlinux.
A test tool: it trusts its input."""
import gzip
import lzma
import struct
import subprocess
import sys


def payload(image):
    if image[0x202:0x206] != b"HdrS":
        sys.exit("kernel-certs: not a bzImage (no HdrS setup header)")
    setup_sects = image[0x1F1] or 4
    offset, length = struct.unpack_from("<II", image, 0x248)
    start = (setup_sects + 1) * 512 + offset
    return image[start:start + length]


def decompress(data):
    if data.startswith(b"\x28\xb5\x2f\xfd"):
        return subprocess.run(["zstd", "-dc"], input=data, capture_output=True).stdout
    if data.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMADecompressor().decompress(data)
    if data.startswith(b"\x1f\x8b"):
        return gzip.GzipFile(fileobj=__import__("io").BytesIO(data)).read()
    sys.exit("kernel-certs: payload compressed with something other than zstd, xz or gzip")


def certificates(vmlinux):
    pos = 0
    while True:
        at = vmlinux.find(b"\x30\x82", pos)
        if at < 0:
            return
        pos = at + 1
        size = int.from_bytes(vmlinux[at + 2:at + 4], "big") + 4
        der = vmlinux[at:at + size]
        if not 300 <= size <= 8192 or b"\x06\x03\x55\x04\x03" not in der:   # a commonName
            continue
        pem = subprocess.run(["openssl", "x509", "-inform", "DER"], input=der, capture_output=True)
        if pem.returncode == 0:
            pos = at + size
            yield pem.stdout


def main():
    image = open(sys.argv[1], "rb").read()
    certs = list(certificates(decompress(payload(image))))
    if not certs:
        sys.exit("kernel-certs: no certificate in the kernel image")
    with open(sys.argv[2], "wb") as out:
        out.write(b"".join(certs))


if __name__ == "__main__":
    main()

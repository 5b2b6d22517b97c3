#!/usr/bin/env python3
"""Writes a .deb whose data.tar lists many empty files, then one real file.

    many_entries_deb.py OUT.deb PACKAGE COUNT NAME_LEN PAYLOAD NAME

The data.tar lists "./usr/" and COUNT empty files, each of whose normalised
name ("usr/...", without "./") is NAME_LEN bytes long, and last PAYLOAD's
bytes as NAME: COUNT + 2 entries in all. It is gzip-compressed, so a few MB
stand for hundreds of thousands of tar headers, as a hostile package's
would. Headers are written by hand: tarfile would take ten times longer.
"""
import gzip
import io
import sys

out, package, count, name_len, payload, name = sys.argv[1:7]
count, name_len = int(count), int(name_len)


def header(name, size, kind):
    h = bytearray(512)
    h[0:len(name)] = name
    h[100:108] = b"0000755\0" if kind == "5" else b"0000644\0"
    h[108:116] = h[116:124] = b"0000000\0"
    h[124:136] = b"%011o\0" % size
    h[136:148] = b"%011o\0" % 1700000000
    h[156] = ord(kind)
    h[257:265] = b"ustar\x0000"
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h)


def tar_gz(entries):
    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1, mtime=0) as z:
        for e in entries:
            z.write(e)
        z.write(b"\0" * 1024)
    return raw.getvalue()


def data_entries():
    yield header(b"./usr/", 0, "5")
    digits = name_len - len("usr/")
    if digits < len(str(count)) or name_len + 2 > 100:
        sys.exit("NAME_LEN does not fit COUNT's numbers in a ustar name")
    for i in range(count):
        yield header(b"./usr/%0*d" % (digits, i), 0, "0")
    body = open(payload, "rb").read()
    yield header(b"./" + name.encode(), len(body), "0")
    yield body + b"\0" * (-len(body) % 512)


control = b"Package: %s\nVersion: 1\nArchitecture: amd64\nMaintainer: t <t@example.org>\nDescription: t\n" % (
    package.encode())
members = [("debian-binary", b"2.0\n"),
           ("control.tar.gz", tar_gz([header(b"./control", len(control), "0"),
                                      control + b"\0" * (-len(control) % 512)])),
           ("data.tar.gz", tar_gz(data_entries()))]
with open(out, "wb") as f:
    f.write(b"!<arch>\n")
    for member, data in members:
        f.write(b"%-16s%-12d%-6d%-6d%-8s%-10d`\n" % (member.encode(), 1700000000, 0, 0, b"100644", len(data)))
        f.write(data + (b"\n" if len(data) % 2 else b""))

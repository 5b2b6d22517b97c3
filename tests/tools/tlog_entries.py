#!/usr/bin/env python3
"""Prints the entries of a c2sp.org/tlog-tiles log, one a line, as an
auditor would read them with no reprosign at hand: the checkpoint's size,
then the entry bundles (tile/entries/N[.p/W], each entry a big-endian
uint16 length and its bytes).

  tlog_entries.py LOGDIR
"""
import os
import struct
import sys


def tile_path(n):
    """tlog-tiles' path for index n: 3-digit groups, all but the last with an x."""
    groups = []
    while True:
        groups.append(n % 1000)
        n //= 1000
        if n == 0:
            break
    groups.reverse()
    return "/".join(["x%03d" % g for g in groups[:-1]] + ["%03d" % groups[-1]])


def main():
    logdir = sys.argv[1]
    with open(os.path.join(logdir, "checkpoint")) as f:
        size = int(f.read().split("\n")[1])
    for n in range((size + 255) // 256):
        width = min(256, size - n * 256)
        path = os.path.join(logdir, "tile", "entries", tile_path(n))
        if width < 256:
            path += ".p/%d" % width
        data = open(path, "rb").read()
        off = 0
        for _ in range(width):
            (length,) = struct.unpack(">H", data[off:off + 2])
            sys.stdout.write(data[off + 2:off + 2 + length].decode() + "\n")
            off += 2 + length


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""on_pty.py OUT COMMAND...: runs COMMAND with its standard error on a
pseudo-terminal (stdin from /dev/null, stdout to /dev/null), writes every
byte the terminal received to OUT, and exits with COMMAND's status."""
import os
import pty
import subprocess
import sys


def main():
    out, argv = sys.argv[1], sys.argv[2:]
    master, slave = pty.openpty()
    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    got = bytearray()
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:   # EIO: the child closed its side
            break
        if not chunk:
            break
        got += chunk
    os.close(master)
    with open(out, "wb") as f:
        f.write(got)
    sys.exit(child.wait())


main()

#!/usr/bin/env python3
"""Turns the "REPROSIGN-EFIVAR NAME-GUID BASE64" lines that the boot tests'
initramfs prints (mkinitramfs.py) back into efivarfs files, as the kernel
showed them: one file NAME-GUID each, attributes word then data.

    serial-efivars.py SERIAL.LOG OUTDIR

Prints the names written; fails if there are none."""
import base64
import os
import sys


def main():
    log, out = sys.argv[1], sys.argv[2]
    parts = {}
    with open(log, "rb") as f:
        for raw in f:
            line = raw.decode("ascii", "replace").strip("\r\n")
            at = line.find("REPROSIGN-EFIVAR ")
            if at < 0:
                continue
            fields = line[at:].split(" ")
            if len(fields) != 3:
                sys.exit(f"serial-efivars: {log}: a broken line: {line!r}")
            parts.setdefault(fields[1], []).append(fields[2])
    if not parts:
        sys.exit(f"serial-efivars: {log}: no REPROSIGN-EFIVAR lines")
    os.makedirs(out, exist_ok=True)
    for name, lines in sorted(parts.items()):
        with open(os.path.join(out, name), "wb") as f:
            f.write(base64.b64decode("".join(lines), validate=True))
        print(name)


if __name__ == "__main__":
    main()

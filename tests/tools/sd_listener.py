#!/usr/bin/env python3
"""Stands in for systemd's side of the service's protocols, to test them
without systemd as PID 1:

  sd_listener.py notify SOCKET OUT SECONDS   records sd_notify datagrams
  sd_listener.py journal SOCKET OUT SECONDS  records journald's native
                                             protocol (FIELD=value lines)

Each received datagram is appended to OUT, followed by a line "--".
Stops after SECONDS, or when a file OUT.stop appears.
"""
import os
import socket
import sys
import time


def main():
    kind, path, out, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if os.path.exists(path):
        os.unlink(path)
    s.bind(path)
    s.settimeout(0.2)
    open(out + ".ready", "w").close()
    end = time.time() + seconds
    with open(out, "ab") as f:
        while time.time() < end and not os.path.exists(out + ".stop"):
            try:
                data = s.recv(65536)
            except socket.timeout:
                continue
            f.write(data.rstrip(b"\n") + b"\n--\n")
            f.flush()
    os.unlink(path)


if __name__ == "__main__":
    main()

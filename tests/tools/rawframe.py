#!/usr/bin/env python3
"""Talks to reprosign's signing socket by hand, as an attacker on the
machine would: frames built here, not by reprosign's client.

  rawframe.py SOCKET REQUEST.json [--set KEY=VALUE]... [--drop KEY]...
              [--attach FILE] [--unsealed] [--trickle]
  rawframe.py SOCKET --hold N

REQUEST.json is a request from `reprosign sign --prepare-offline`; --set
replaces a top-level member (VALUE is JSON), --drop removes one. --attach
passes FILE's bytes with the frame (SCM_RIGHTS): in a sealed memfd, or with
--unsealed as an ordinary open file. --trickle sends the frame one byte a
second. --hold opens N connections, keeps them, and then asks on one more.

Prints the service's answer (JSON) and exits 0; exits 3 when the service
closed the connection without answering.
"""
import fcntl
import json
import os
import socket
import struct
import sys
import time


def frame(body):
    return struct.pack(">I", len(body)) + body


def read_answer(s):
    data = b""
    while len(data) < 4 or len(data) < 4 + struct.unpack(">I", data[:4])[0]:
        try:
            chunk = s.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            chunk = b""
        if not chunk:
            return None
        data += chunk
    return data[4:4 + struct.unpack(">I", data[:4])[0]].decode()


def attached_fd(path, sealed):
    if not sealed:
        return os.open(path, os.O_RDONLY)
    fd = os.memfd_create("attack", os.MFD_ALLOW_SEALING)
    with open(path, "rb") as f:
        os.write(fd, f.read())
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS,
                fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
    return fd


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def hold(path, n):
    held = [connect(path) for _ in range(n)]
    s = connect(path)
    s.settimeout(30)
    answer = read_answer(s)
    for h in held:
        h.close()
    return answer


def send(path, args):
    doc = json.load(open(args[0]))
    attach, sealed, trickle, i = None, True, False, 1
    while i < len(args):
        if args[i] == "--set":
            key, value = args[i + 1].split("=", 1)
            doc[key] = json.loads(value)
            i += 2
        elif args[i] == "--drop":
            doc.pop(args[i + 1], None)
            i += 2
        elif args[i] == "--attach":
            attach = args[i + 1]
            i += 2
        elif args[i] == "--unsealed":
            sealed, i = False, i + 1
        elif args[i] == "--trickle":
            trickle, i = True, i + 1
        else:
            sys.exit("rawframe.py: unknown option " + args[i])
    data = frame(json.dumps(doc).encode())
    s = connect(path)
    s.settimeout(60)
    try:
        if attach:
            fd = attached_fd(attach, sealed)
            socket.send_fds(s, [data], [fd])
            os.close(fd)
        elif trickle:
            for b in data:
                s.send(bytes([b]))
                time.sleep(1)
        else:
            s.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        return None
    return read_answer(s)


def main():
    if len(sys.argv) >= 4 and sys.argv[2] == "--hold":
        answer = hold(sys.argv[1], int(sys.argv[3]))
    else:
        answer = send(sys.argv[1], sys.argv[2:])
    if answer is None:
        print("closed without an answer")
        sys.exit(3)
    print(answer)


if __name__ == "__main__":
    main()

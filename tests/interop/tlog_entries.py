#!/usr/bin/env python3
# Prints the entries of a c2sp.org/tlog-tiles log directory, one a line,
# as far as its checkpoint's size: a reader of the entry bundles written
# from the specification alone (no signature check: tests pin the key
# with `reprosign log verify --vkey` and the Go verifier).
import sys


def tile_path(level, n, width):
    parts = ['%03d' % (n % 1000)]
    while n >= 1000:
        n //= 1000
        parts.insert(0, 'x%03d' % (n % 1000))
    path = 'tile/%s/%s' % (level, '/'.join(parts))
    return path if width == 256 else '%s.p/%d' % (path, width)


def entries(logdir):
    size = int(open(logdir + '/checkpoint').read().split('\n')[1])
    for b in range((size + 255) // 256):
        width = min(256, size - 256 * b)
        data = open('%s/%s' % (logdir, tile_path('entries', b, width)), 'rb').read()
        pos = 0
        for _ in range(width):
            n = int.from_bytes(data[pos:pos + 2], 'big')
            yield data[pos + 2:pos + 2 + n]
            pos += 2 + n
        assert pos == len(data), 'trailing bytes in bundle %d' % b


if __name__ == '__main__':
    for e in entries(sys.argv[1]):
        sys.stdout.buffer.write(e + b'\n')

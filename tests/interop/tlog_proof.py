#!/usr/bin/env python3
# Checks a c2sp.org/tlog-proof@v1 inclusion proof (argv[1]) of an entry
# (argv[2]) against its checkpoint's root, or (argv[1] = "consistency")
# the output of `reprosign log consistency` on stdin: RFC 9162 §2.1.3.2
# and §2.1.4.2 step by step, written from the RFC, not from our C code.
import base64, hashlib, sys

H = lambda *p: hashlib.sha256(b''.join(p)).digest()


def inclusion(proof_text, entry):
    head, checkpoint = proof_text.split('\n\n', 1)
    lines = head.split('\n')
    assert lines[0] == 'c2sp.org/tlog-proof@v1'
    assert lines[1].startswith('index ')
    fn = int(lines[1][6:])
    path = [base64.b64decode(l) for l in lines[2:]]
    cp = checkpoint.split('\n')
    sn, root = int(cp[1]) - 1, base64.b64decode(cp[2])
    r = H(b'\0', entry)
    for p in path:
        assert sn > 0
        if fn & 1 or fn == sn:
            r = H(b'\1', p, r)
            while not fn & 1 and fn:
                fn >>= 1; sn >>= 1
        else:
            r = H(b'\1', r, p)
        fn >>= 1; sn >>= 1
    assert sn == 0 and r == root


def consistency(text):
    lines = text.strip('\n').split('\n')
    _, m, old = lines[0].split(' ')
    _, n, new = lines[1].split(' ')
    m, n, old, new = int(m), int(n), base64.b64decode(old), base64.b64decode(new)
    proof = [base64.b64decode(l) for l in lines[2:]]
    if m == n:
        assert not proof and old == new; return
    if m & (m - 1) == 0:
        proof.insert(0, old)
    fn, sn = m - 1, n - 1
    while fn & 1:
        fn >>= 1; sn >>= 1
    fr = sr = proof[0]
    for c in proof[1:]:
        assert sn > 0
        if fn & 1 or fn == sn:
            fr, sr = H(b'\1', c, fr), H(b'\1', c, sr)
            while not fn & 1 and fn:
                fn >>= 1; sn >>= 1
        else:
            sr = H(b'\1', sr, c)
        fn >>= 1; sn >>= 1
    assert sn == 0 and fr == old and sr == new


if sys.argv[1] == 'consistency':
    consistency(sys.stdin.read())
else:
    inclusion(open(sys.argv[1]).read(), open(sys.argv[2], 'rb').read())

#!/usr/bin/python3
"""Makes and alters in-toto attestations for the tests, with Debian's own
in-toto and securesystemslib (and python3-cryptography for DSSE, which
bookworm's in-toto does not write). Run it with /usr/bin/python3: those
modules are Debian's packages.

  attest.py layout OWNER-KEY REBUILDER-PUB KEYTYPE OUT   a layout: one step "rebuild", that key, threshold 1
  attest.py edit LINK MODE OUT       MODE: digest (one hex digit of a product's digest), reorder (members
                                     reordered, re-indented: the same canonical bytes), list (the command's
                                     elements swapped), real (a real number in "signed"), type (_type "layout")
  attest.py dsse KEY NAME SHA256 OUT [PAYLOADTYPE]   an in-toto Statement v1 in a DSSE envelope, signed
                                     with an ed25519 JSON private key written by in-toto-keygen
  attest.py pem PUB OUT              the same ed25519 public key as a PEM file
"""
import base64
import json
import sys


def layout(owner, pub, keytype, out):
    from in_toto.models.layout import Layout, Step
    from in_toto.models.metadata import Metablock
    from securesystemslib import interface
    owner_key = interface.import_ed25519_privatekey_from_file(owner)
    if keytype == "rsa":
        fun = interface.import_rsa_publickey_from_file(pub)
    elif keytype == "ecdsa":
        fun = interface.import_ecdsa_publickey_from_file(pub)
    else:
        fun = interface.import_ed25519_publickey_from_file(pub)
    lay = Layout()
    lay.set_relative_expiration(days=30)
    lay.add_functionary_key(fun)
    step = Step(name="rebuild")
    step.pubkeys = [fun["keyid"]]
    step.threshold = 1
    lay.steps = [step]
    mb = Metablock(signed=lay)
    mb.sign(owner_key)
    mb.dump(out)


def edit(link, mode, out):
    with open(link) as f:
        doc = json.load(f)
    signed = doc["signed"]
    if mode == "digest":
        name = next(iter(signed["products"]))
        d = signed["products"][name]["sha256"]
        signed["products"][name]["sha256"] = ("1" if d[0] != "1" else "2") + d[1:]
    elif mode == "list":
        signed["command"] = list(reversed(signed["command"]))
    elif mode == "real":
        signed["byproducts"]["return-value"] = 0.0
    elif mode == "type":
        signed["_type"] = "layout"
    elif mode == "reorder":
        def backwards(o):
            if isinstance(o, dict):
                return {k: backwards(o[k]) for k in sorted(o, reverse=True)}
            if isinstance(o, list):
                return [backwards(v) for v in o]
            return o
        with open(out, "w") as f:
            f.write(json.dumps(backwards(doc), indent=7, separators=(" ,", " :  ")))
        return
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)


def pae(ptype, body):
    t = ptype.encode()
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(body), body)


def dsse(key, name, sha256, out, ptype="application/vnd.in-toto+json"):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    with open(key) as f:
        k = json.load(f)
    priv = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(k["keyval"]["private"]))
    statement = {"_type": "https://in-toto.io/Statement/v1",
                 "subject": [{"name": name, "digest": {"sha256": sha256}}],
                 "predicateType": "https://reproducible-builds.org/rebuild/v1",
                 "predicate": {"rebuilder": "test"}}
    body = json.dumps(statement).encode()
    sig = priv.sign(pae(ptype, body))
    env = {"payloadType": ptype, "payload": base64.b64encode(body).decode(),
           "signatures": [{"keyid": k["keyid"], "sig": base64.b64encode(sig).decode()}]}
    with open(out, "w") as f:
        json.dump(env, f)


def pem(pub, out):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    with open(pub) as f:
        k = json.load(f)
    key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(k["keyval"]["public"]))
    with open(out, "wb") as f:
        f.write(key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"layout": layout, "edit": edit, "dsse": dsse, "pem": pem}[cmd](*args)

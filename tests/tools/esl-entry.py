#!/usr/bin/env python3
"""Signature lists that `reprosign efi siglist` does not write, for tests:

    esl-entry.py tbs CERT.pem OUT.esl    EFI_CERT_X509_SHA256: the SHA-256 of
                                         the certificate's TBSCertificate,
                                         revocation time zero (dbx)
    esl-entry.py file FILE OUT.esl       EFI_CERT_SHA256 of the whole file
                                         (the kernel revokes a module by the
                                         hash of its signed file)"""
import hashlib
import ssl
import struct
import sys

X509_SHA256 = bytes.fromhex("92a4d23bc0967940b420fcf98ef103ed")
SHA256 = bytes.fromhex("2616c4c14c509240aca941f936934328")


def tbs_hash(pem_path):
    der = ssl.PEM_cert_to_DER_cert(open(pem_path).read())
    # Certificate ::= SEQUENCE { tbsCertificate, ... }, both with 2-byte
    # long-form lengths in every certificate these tests make.
    assert der[0] == 0x30 and der[1] == 0x82 and der[4] == 0x30 and der[5] == 0x82
    return hashlib.sha256(der[4:8 + int.from_bytes(der[6:8], "big")]).digest()


def main():
    kind, src, out = sys.argv[1:4]
    if kind == "tbs":
        guid, data = X509_SHA256, tbs_hash(src) + bytes(16)
    else:
        guid, data = SHA256, hashlib.sha256(open(src, "rb").read()).digest()
    entry = bytes(16) + data
    open(out, "wb").write(guid + struct.pack("<III", 28 + len(entry), 0, len(entry)) + entry)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Generates malformed inputs for every format reprosign reads, from valid
seeds, reproducibly (--seed).

    adversarial.py OUTDIR --seed N --pe UNSIGNED.efi --signed-pe SIGNED.efi
                   --sig DETACHED.sig --module SIGNED.ko --esl LIST.esl
                   --auth UPDATE.auth [--vars VARSTORE.fd] --efi-payload GOOD.efi

Writes one file per case under OUTDIR/{pe,module,sig,json,efi}/ and one
directory per case under OUTDIR/deb/ (template.json or template.deb, and a
pkgs/ directory of .deb files for sign-template). Prints the case count.

The mutations: truncations at structure boundaries and random offsets; bit
flips in header fields; extreme values (0, 1, 2^31-1, 2^32-1, the file
size and beyond) in every size, count and offset field; overlapping and
self-referencing structures; deep nesting and huge arrays in files.json;
tar entries with '..', absolute paths, symlinks (escaping and cyclic),
hardlinks, device files, FIFOs, duplicate names, huge sizes and truncated
members, in both the unsigned packages and the template itself."""

import argparse
import io
import json
import lzma
import os
import random
import struct
import tarfile

COUNTS = {}


def emit(outdir, kind, name, data):
    d = os.path.join(outdir, kind)
    os.makedirs(d, exist_ok=True)
    n = COUNTS.get(kind, 0)
    COUNTS[kind] = n + 1
    with open(os.path.join(d, "%03d-%s" % (n, name)), "wb") as f:
        f.write(data)


def put(buf, off, fmt, value):
    """Packs value at off, clamped to the field's width; skips offsets past the end."""
    size = struct.calcsize(fmt)
    if off < 0 or off + size > len(buf):
        return buf
    bits = size * 8
    struct.pack_into(fmt, buf, off, value & ((1 << bits) - 1))
    return buf


def flip(data, off, rng):
    b = bytearray(data)
    if 0 <= off < len(b):
        b[off] ^= 1 << rng.randrange(8)
    return b


EXTREMES = [0, 1, 0x7FFFFFFF, 0xFFFFFFFF]


# ---- PE/COFF ----

def pe_layout(img):
    lfanew = struct.unpack_from("<I", img, 0x3C)[0]
    nsec = struct.unpack_from("<H", img, lfanew + 6)[0]
    optsize = struct.unpack_from("<H", img, lfanew + 20)[0]
    opt = lfanew + 24
    pe32 = struct.unpack_from("<H", img, opt)[0] == 0x10B
    dd = opt + (96 if pe32 else 112)
    return {
        "lfanew": lfanew, "nsec": nsec, "opt": opt, "table": opt + optsize,
        "fields": {
            "e_lfanew": (0x3C, "<I"),
            "Machine": (lfanew + 4, "<H"),
            "NumberOfSections": (lfanew + 6, "<H"),
            "PointerToSymbolTable": (lfanew + 12, "<I"),
            "NumberOfSymbols": (lfanew + 16, "<I"),
            "SizeOfOptionalHeader": (lfanew + 20, "<H"),
            "Magic": (opt, "<H"),
            "SizeOfImage": (opt + 56, "<I"),
            "SizeOfHeaders": (opt + 60, "<I"),
            "CheckSum": (opt + 64, "<I"),
            "NumberOfRvaAndSizes": (dd - 4, "<I"),
            "CertTable.VirtualAddress": (dd + 4 * 8, "<I"),
            "CertTable.Size": (dd + 4 * 8 + 4, "<I"),
            "Section0.VirtualSize": (opt + optsize + 8, "<I"),
            "Section0.SizeOfRawData": (opt + optsize + 16, "<I"),
            "Section0.PointerToRawData": (opt + optsize + 20, "<I"),
            "Section1.SizeOfRawData": (opt + optsize + 40 + 16, "<I"),
            "Section1.PointerToRawData": (opt + optsize + 40 + 20, "<I"),
            "LastSection.PointerToRawData": (opt + optsize + 40 * (nsec - 1) + 20, "<I"),
        },
    }


def pe_cases(out, unsigned, signed, rng):
    lay = pe_layout(signed)
    cert_va = struct.unpack_from("<I", signed, lay["fields"]["CertTable.VirtualAddress"][0])[0]
    n = len(signed)
    # Truncations: every structure boundary, and random offsets.
    cuts = {0, 1, 2, 0x3C, 0x40, lay["lfanew"], lay["lfanew"] + 4, lay["lfanew"] + 24, lay["opt"] + 60,
            lay["opt"] + 100, lay["table"], lay["table"] + 20, lay["table"] + 40 * lay["nsec"], 0x200, 0x400,
            cert_va - 1, cert_va, cert_va + 4, cert_va + 8, cert_va + 9, (cert_va + n) // 2, n - 8, n - 1}
    cuts |= {rng.randrange(1, n) for _ in range(14)}
    for c in sorted(x for x in cuts if 0 <= x < n):
        emit(out, "pe", "truncated-at-%d" % c, signed[:c])
    # Bit flips in every header field, in the signed and the unsigned image.
    for name, (off, fmt) in lay["fields"].items():
        emit(out, "pe", "flip-%s" % name, flip(signed, off + rng.randrange(struct.calcsize(fmt)), rng))
    # Extreme values in every size, count and offset field.
    for name, (off, fmt) in lay["fields"].items():
        if name in ("Machine", "CheckSum", "Magic"):
            continue
        for v in EXTREMES + [n, n + 1]:
            emit(out, "pe", "%s=%#x" % (name, v), put(bytearray(signed), off, fmt, v))
    for name in ("NumberOfSections", "SizeOfHeaders", "Section0.PointerToRawData", "CertTable.Size"):
        off, fmt = lay["fields"][name]
        emit(out, "pe", "unsigned-%s=max" % name, put(bytearray(unsigned), off, fmt, 0xFFFFFFFF))
    pe_overlaps(out, unsigned, signed, lay)
    pe_cert_tables(out, signed, lay, cert_va)
    for i in range(12):
        b = bytearray(signed)
        for _ in range(8):
            b[rng.randrange(n)] = rng.randrange(256)
        emit(out, "pe", "random-bytes-%d" % i, b)


def pe_overlaps(out, unsigned, signed, lay):
    f = lay["fields"]
    s0 = struct.unpack_from("<I", unsigned, f["Section0.PointerToRawData"][0])[0]
    s0size = struct.unpack_from("<I", unsigned, f["Section0.SizeOfRawData"][0])[0]
    cases = {
        "sections-overlap": [("Section1.PointerToRawData", s0 + 16)],
        "sections-identical": [("Section1.PointerToRawData", s0), ("Section1.SizeOfRawData", s0size)],
        "section-inside-headers": [("Section0.PointerToRawData", 0)],
        "section-covers-whole-file": [("Section0.PointerToRawData", 0), ("Section0.SizeOfRawData", len(signed))],
        "section-wraps-32bit": [("Section0.PointerToRawData", 0xFFFFFF00), ("Section0.SizeOfRawData", 0x200)],
        "headers-overlap-sections": [("SizeOfHeaders", s0 + s0size)],
    }
    for name, edits in cases.items():
        for base, label in ((unsigned, "unsigned"), (signed, "signed")):
            b = bytearray(base)
            for field, v in edits:
                off, fmt = f[field]
                put(b, off, fmt, v)
            emit(out, "pe", "%s-%s" % (label, name), b)
    # The certificate table pointing into a section, and into the headers.
    for name, va in (("cert-table-in-section", s0), ("cert-table-in-headers", 0x40)):
        b = bytearray(signed)
        put(b, f["CertTable.VirtualAddress"][0], "<I", va)
        emit(out, "pe", name, b)


def pe_cert_tables(out, signed, lay, cert_va):
    base = bytearray(signed[:cert_va])
    dd = lay["fields"]["CertTable.VirtualAddress"][0]
    sig = signed[cert_va + 8:]

    def with_table(name, table):
        b = bytearray(base) + table
        put(b, dd, "<I", cert_va)
        put(b, dd + 4, "<I", len(table))
        emit(out, "pe", name, b)

    for length in (0, 1, 7, 8, 9, len(sig) + 7, len(sig) + 9, 0x7FFFFFFF, 0xFFFFFFFF):
        with_table("wincert-length-%#x" % length, struct.pack("<IHH", length, 0x200, 2) + sig)
    with_table("wincert-bad-revision", struct.pack("<IHH", len(sig) + 8, 0x100, 2) + sig)
    with_table("wincert-bad-type", struct.pack("<IHH", len(sig) + 8, 0x200, 1) + sig)
    # A zero-length entry followed by a real one: a naive walk never advances.
    with_table("wincert-zero-then-real", struct.pack("<IHH", 0, 0x200, 2) + struct.pack("<IHH", len(sig) + 8, 0x200, 2) + sig)
    # Many tiny entries: a long walk that must stay bounded.
    with_table("wincert-4096-empty-entries", struct.pack("<IHH", 8, 0x200, 2) * 4096)
    # PKCS#7 with its outer DER length claiming 4 GB.
    with_table("pkcs7-huge-der-length", struct.pack("<IHH", 24, 0x200, 2) + b"\x30\x84\xff\xff\xff\xff" + b"\0" * 10)
    # Deeply nested DER.
    deep = b"\x30\x80" * 5000 + b"\0\0" * 5000
    with_table("pkcs7-nested-5000", struct.pack("<IHH", 8 + len(deep), 0x200, 2) + deep)


# ---- kernel modules ----

MAGIC = b"~Module signature appended~\n"


def module_cases(out, mod, rng):
    n = len(mod)
    if not mod.endswith(MAGIC):
        return
    info = n - len(MAGIC) - 12
    sig_len = struct.unpack_from(">I", mod, info + 8)[0]
    sig_start = info - sig_len
    for c in sorted({n - 1, n - 10, n - 27, n - 28, n - 29, n - 40, info + 4, sig_start + sig_len // 2, sig_start,
                     sig_start - 1, 64, 52, 16, 4, 0}):
        if 0 <= c < n:
            emit(out, "module", "truncated-at-%d" % c, mod[:c])
    for i in range(len(MAGIC)):
        if i % 4 == 0:
            emit(out, "module", "magic-flip-%d" % i, flip(mod, n - len(MAGIC) + i, rng))
    for v in [0, 1, sig_len - 1, sig_len + 1, info, info + 1, n, 0x7FFFFFFF, 0xFFFFFFFF]:
        emit(out, "module", "sig_len=%#x" % v, put(bytearray(mod), info + 8, ">I", v))
    for field, off in (("algo", 0), ("hash", 1), ("id_type", 2), ("signer_len", 3), ("key_id_len", 4)):
        for v in (0xFF, 7):
            b = bytearray(mod)
            b[info + off] = v
            emit(out, "module", "%s=%d" % (field, v), b)
    for i in range(8):
        emit(out, "module", "cms-flip-%d" % i, flip(mod, sig_start + rng.randrange(sig_len), rng))
    # The ELF header: section table offset, count and entry size.
    for name, off, fmt in (("e_shoff", 0x28, "<Q"), ("e_shnum", 0x3C, "<H"), ("e_shentsize", 0x3A, "<H"),
                           ("e_shstrndx", 0x3E, "<H")):
        for v in (0, 0xFFFF, 0xFFFFFFFFFFFFFFFF):
            emit(out, "module", "%s=%#x" % (name, v), put(bytearray(mod), off, fmt, v))
    # The signature appended twice: the inner one is not a valid trailer.
    emit(out, "module", "double-trailer", mod + mod[sig_start:])
    emit(out, "module", "trailer-only", mod[sig_start:])


# ---- detached signatures ----

def sig_cases(out, sig, rng):
    emit(out, "sig", "empty", b"")
    for i in range(4):
        emit(out, "sig", "random-%d" % i, bytes(rng.randrange(256) for _ in range(rng.choice([1, 64, 700, 5000]))))
    for c in sorted({1, 2, 4, 16, len(sig) // 4, len(sig) // 2, len(sig) - 100, len(sig) - 1}):
        emit(out, "sig", "truncated-at-%d" % c, sig[:c])
    for i in range(10):
        emit(out, "sig", "flip-%d" % i, flip(sig, rng.randrange(len(sig)), rng))
    for i in range(4):   # the DER headers near the start hold the lengths
        emit(out, "sig", "header-flip-%d" % i, flip(sig, rng.randrange(min(40, len(sig))), rng))
    emit(out, "sig", "der-length-4g", b"\x30\x84\xff\xff\xff\xff" + sig[4:])
    emit(out, "sig", "der-indefinite-unterminated", b"\x30\x80" + sig[4:])
    emit(out, "sig", "nested-10000", b"\x30\x80" * 10000)
    emit(out, "sig", "trailing-garbage", sig + b"\xff" * 64)
    emit(out, "sig", "twice", sig + sig)


# ---- files.json ----

def entry(path, sig_type="efi"):
    return {"sig_type": sig_type, "file": path}


def json_cases(out, rng):
    good = "usr/lib/shim/good.efi"
    pkg = "shim-unsigned"
    docs = {
        "deep-arrays": "[" * 100000 + "]" * 100000,
        "deep-objects": '{"a":' * 50000 + "1" + "}" * 50000,
        "deep-in-files": json.dumps({pkg: {"files": [[[[[[]]]]]]}}),
        "unterminated": '{"%s": {"files": [' % pkg,
        "not-utf8": b'{"\xff\xfe": {"files": []}}',
        "empty": "",
        "null": "null",
        "number": "12345678901234567890123456789",
        "string": '"files.json"',
        "packages-is-array": json.dumps({"packages": [pkg]}),
        "packages-is-null": json.dumps({"packages": None}),
        "files-is-string": json.dumps({pkg: {"files": good}}),
        "files-is-object": json.dumps({pkg: {"files": {"file": good}}}),
        "file-is-number": json.dumps({pkg: {"files": [{"sig_type": "efi", "file": 42}]}}),
        "sig_type-is-null": json.dumps({pkg: {"files": [{"sig_type": None, "file": good}]}}),
        "entry-is-string": json.dumps({pkg: {"files": [good]}}),
        "trusted_certs-is-object": json.dumps({pkg: {"trusted_certs": {"a": 1}, "files": [entry(good)]}}),
        "trusted_certs-not-hex": json.dumps({pkg: {"trusted_certs": ["zz" * 32], "files": [entry(good)]}}),
        "version-is-number": json.dumps({"version": 2, "packages": {pkg: {"files": [entry(good)]}}}),
        "version-3": json.dumps({"version": "3", "packages": {pkg: {"files": [entry(good)]}}}),
        "nul-in-path": json.dumps({pkg: {"files": [entry("usr/lib/shim/good.efi\u0000.x")]}}),
        "nul-in-package": json.dumps({pkg + "\u0000x": {"files": [entry(good)]}}),
        "long-path": json.dumps({pkg: {"files": [entry("a/" * 50000 + "x.efi")]}}),
        "long-package": json.dumps({"a" * 100000: {"files": [entry(good)]}}),
        "slash-path": json.dumps({pkg: {"files": [entry("usr//lib/shim/good.efi")]}}),
        "dot-path": json.dumps({pkg: {"files": [entry("./usr/lib/shim/./good.efi")]}}),
        "trailing-slash": json.dumps({pkg: {"files": [entry(good + "/")]}}),
        "dotdot-package": json.dumps({"..": {"files": [entry(good)]}}),
        "slash-package": json.dumps({"shim/../x": {"files": [entry(good)]}}),
        "duplicate-keys": '{"%s": {"files": []}, "%s": {"files": [{"sig_type": "efi", "file": "%s"}]}}' % (pkg, pkg, good),
        "huge-array-bad-types": json.dumps({pkg: {"files": [7] * 200000}}),
        "huge-array-missing": json.dumps({pkg: {"files": [entry("nope/%d.efi" % i) for i in range(50000)]}}),
        "many-packages": json.dumps({"p%d-x" % i: {"files": [entry(good)]} for i in range(20000)}),
        "huge-number": '{"%s": {"files": [], "x": 1e999999}}' % pkg,
        "duplicate-entries": json.dumps({pkg: {"files": [entry(good)] * 3}}),
        "absolute-dotdot-mixed": json.dumps({pkg: {"files": [entry(good), entry("/etc/passwd"),
                                                             entry("../../etc/passwd")]}}),
    }
    for name, doc in docs.items():
        emit(out, "json", name, doc if isinstance(doc, bytes) else doc.encode())


# ---- .deb and tar ----

def ar_archive(members):
    out = bytearray(b"!<arch>\n")
    for name, data, *size in members:
        claimed = size[0] if size else len(data)
        out += b"%-16s%-12d%-6d%-6d%-8s%-10d`\n" % (name, 0, 0, 0, b"100644", claimed)
        out += data
        if len(data) % 2:
            out += b"\n"
    return bytes(out)


def tar_bytes(entries, fmt=tarfile.GNU_FORMAT):
    """entries: (name, type, data_or_linkname, extra dict)."""
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w", format=fmt) as t:
        for name, typ, payload, extra in entries:
            ti = tarfile.TarInfo(name)
            ti.type = typ
            ti.mode = extra.get("mode", 0o644)
            ti.mtime = 1700000000
            if typ in (tarfile.SYMTYPE, tarfile.LNKTYPE):
                ti.linkname = payload
                t.addfile(ti)
            elif typ in (tarfile.CHRTYPE, tarfile.BLKTYPE):
                ti.devmajor, ti.devminor = 1, 3
                t.addfile(ti)
            elif typ in (tarfile.DIRTYPE, tarfile.FIFOTYPE):
                t.addfile(ti)
            else:
                ti.size = extra.get("size", len(payload))
                if "size" in extra:
                    # A header claiming more than follows: write it bare.
                    bio.write(ti.tobuf(fmt, tarfile.ENCODING, "surrogateescape"))
                    bio.write(payload)
                else:
                    t.addfile(ti, io.BytesIO(payload))
            if extra.get("stop"):
                break
    return bio.getvalue()


CONTROL = "Package: %s\nVersion: %s\nArchitecture: amd64\nMaintainer: t <t@example.org>\nDescription: t\n"


def deb(package, version, data_entries, control_extra="", data_name=b"data.tar", compress=None):
    control = tar_bytes([("./control", tarfile.REGTYPE, (CONTROL % (package, version) + control_extra).encode(), {})])
    data = tar_bytes(data_entries)
    if compress == "xz":
        data = lzma.compress(data)
    return ar_archive([(b"debian-binary", b"2.0\n"), (b"control.tar", control), (data_name, data)])


def deb_case(out, name, template, pkgs, as_deb=False):
    d = os.path.join(out, "deb", "%03d-%s" % (COUNTS.get("deb", 0), name))
    COUNTS["deb"] = COUNTS.get("deb", 0) + 1
    os.makedirs(os.path.join(d, "pkgs"))
    with open(os.path.join(d, "template.deb" if as_deb else "template.json"), "wb") as f:
        f.write(template)
    for fname, data in pkgs.items():
        with open(os.path.join(d, "pkgs", fname), "wb") as f:
            f.write(data)


def deb_cases(out, efi):
    pkg, path = "shim-unsigned", "usr/lib/shim/x.efi"
    tmpl = json.dumps({pkg: {"files": [entry(path)]}}).encode()
    R, S, L, D = tarfile.REGTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.DIRTYPE
    base = [("./usr/", D, b"", {}), ("./usr/lib/", D, b"", {}), ("./usr/lib/shim/", D, b"", {})]
    data_cases = {
        "ok": [("./" + path, R, efi, {})],
        "entry-dotdot": [("./usr/lib/shim/../../../../x.efi", R, efi, {}), ("./" + path, R, efi, {})],
        "entry-dotdot-only": [("../../" + path, R, efi, {})],
        "entry-absolute": [("/" + path, R, efi, {})],
        "symlink-absolute": [("./" + path, S, "/etc/passwd", {})],
        "symlink-escaping": [("./" + path, S, "../../../../../etc/passwd", {})],
        "symlink-self": [("./" + path, S, "x.efi", {})],
        "symlink-cycle": [("./usr/lib/shim/a.efi", S, "x.efi", {}), ("./" + path, S, "a.efi", {})],
        "symlink-chain-500": [("./usr/lib/shim/l%d" % i, S, "l%d" % (i + 1), {}) for i in range(500)] +
                             [("./usr/lib/shim/l500", R, efi, {}), ("./" + path, S, "l0", {})],
        "symlink-dir-escaping": [("./usr/lib/shim", S, "/etc", {}), ("./" + path, R, efi, {})],
        "hardlink-escaping": [("./" + path, L, "../../../etc/passwd", {})],
        "hardlink-absolute": [("./" + path, L, "/etc/passwd", {})],
        "hardlink-missing": [("./" + path, L, "./usr/lib/shim/none.efi", {})],
        "hardlink-self": [("./" + path, L, "./" + path, {})],
        "hardlink-ok": [("./usr/lib/shim/real.efi", R, efi, {}), ("./" + path, L, "./usr/lib/shim/real.efi", {})],
        "char-device": [("./" + path, tarfile.CHRTYPE, b"", {})],
        "block-device": [("./" + path, tarfile.BLKTYPE, b"", {})],
        "fifo": [("./" + path, tarfile.FIFOTYPE, b"", {})],
        "directory": [("./" + path + "/", D, b"", {})],
        "duplicate-names": [("./" + path, R, efi, {}), ("./" + path, R, b"MZ" + b"\0" * 200, {})],
        "duplicate-file-then-dir": [("./" + path, R, efi, {}), ("./" + path + "/", D, b"", {})],
        "huge-size": [("./" + path, R, efi[:512], {"size": 1 << 36, "stop": True})],
        "size-larger-than-data": [("./" + path, R, efi[:1000], {"size": len(efi), "stop": True})],
        "long-name": [("./usr/lib/shim/" + "n" * 300 + "/../x.efi", R, efi, {})],
    }
    for name, entries in data_cases.items():
        full = base + entries if not name.startswith("entry-") else entries
        deb_case(out, "data-" + name, tmpl, {"p.deb": deb(pkg, "1.0", full)})
    good = deb(pkg, "1.0", base + data_cases["ok"])
    # Broken containers.
    deb_case(out, "ar-truncated", tmpl, {"p.deb": good[:len(good) // 2]})
    deb_case(out, "ar-header-only", tmpl, {"p.deb": good[:8 + 60]})
    deb_case(out, "ar-bad-magic", tmpl, {"p.deb": b"!<arcX>\n" + good[8:]})
    deb_case(out, "ar-member-size-huge", tmpl, {"p.deb": ar_archive([(b"debian-binary", b"2.0\n", 9999999999)])})
    deb_case(out, "ar-member-size-garbage", tmpl, {"p.deb": good[:8 + 48] + b"zz" + good[8 + 50:]})
    deb_case(out, "no-data-member", tmpl, {"p.deb": ar_archive([(b"debian-binary", b"2.0\n")])})
    deb_case(out, "data-tar-garbage", tmpl, {"p.deb": ar_archive([(b"debian-binary", b"2.0\n"), (b"control.tar",
                                              tar_bytes([("./control", R, (CONTROL % (pkg, "1")).encode(), {})])),
                                              (b"data.tar", b"\x42" * 3000)])})
    xz = deb(pkg, "1.0", base + data_cases["ok"], data_name=b"data.tar.xz", compress="xz")
    deb_case(out, "data-xz-truncated", tmpl, {"p.deb": xz[:len(xz) - 200]})
    deb_case(out, "control-no-package", tmpl, {"p.deb": ar_archive([(b"debian-binary", b"2.0\n"), (b"control.tar",
                                              tar_bytes([("./control", R, b"Version: 1\n", {})])),
                                              (b"data.tar", tar_bytes(base))])})
    deb_case(out, "package-name-dotdot", tmpl, {"p.deb": deb("../../shim-unsigned", "1.0", base + data_cases["ok"])})
    deb_case(out, "two-debs-same-version", tmpl, {"a.deb": good, "b.deb": good})
    template_cases(out, pkg, path, efi, base)


def template_deb(name, files_json, source_entries, changelog_name="shim-helpers-amd64-signed"):
    prefix = "./usr/share/code-signing/%s" % name
    changelog = ("%s (1.0) unstable; urgency=medium\n\n  * t\n\n -- t <t@example.org>  "
                 "Tue, 14 Nov 2023 22:13:20 +0000\n" % changelog_name).encode()
    D, R = tarfile.DIRTYPE, tarfile.REGTYPE
    entries = [("./usr/", D, b"", {}), ("./usr/share/", D, b"", {}), ("./usr/share/code-signing/", D, b"", {}),
               (prefix + "/", D, b"", {}), (prefix + "/files.json", R, files_json, {}),
               (prefix + "/source-template/", D, b"", {}), (prefix + "/source-template/debian/", D, b"", {}),
               (prefix + "/source-template/debian/changelog", R, changelog, {})]
    entries += [(prefix + "/source-template/" + n, t, p, {}) for n, t, p in source_entries]
    return deb(name, "1.0", entries)


def template_cases(out, pkg, path, efi, base):
    good_pkg = {"p.deb": deb(pkg, "1.0", base + [("./" + path, tarfile.REGTYPE, efi, {})])}
    fj = json.dumps({pkg: {"files": [entry(path)]}}).encode()
    name = "shim-helpers-amd64-signed-template"
    R, S, L = tarfile.REGTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE
    cases = {
        "ok": [],
        "source-dotdot": [("debian/../../../../../../evil", R, b"x")],
        "source-dotdot-dir": [("../evil/", tarfile.DIRTYPE, b"")],
        "source-absolute": [("/tmp/evil", R, b"x")],
        "source-symlink": [("debian/rules", S, "/etc/passwd")],
        "source-symlink-dir": [("debian/sub", S, "../../../../.."), ("debian/sub/evil", R, b"x")],
        "source-hardlink": [("debian/rules", L, "/etc/passwd")],
        "source-device": [("debian/dev", tarfile.CHRTYPE, b"")],
        "source-fifo": [("debian/fifo", tarfile.FIFOTYPE, b"")],
        "source-duplicate": [("debian/rules", R, b"a"), ("debian/rules", R, b"b")],
    }
    for cname, entries in cases.items():
        deb_case(out, "template-" + cname, template_deb(name, fj, entries), good_pkg, as_deb=True)
    deb_case(out, "template-changelog-dotdot", template_deb(name, fj, [], changelog_name="../../evil"), good_pkg,
             as_deb=True)
    deb_case(out, "template-changelog-slash", template_deb(name, fj, [], changelog_name="a/b"), good_pkg, as_deb=True)
    deb_case(out, "template-files-json-symlink",
             deb(name, "1.0", [("./usr/share/code-signing/%s/files.json" % name, S, "/etc/passwd", {})]),
             good_pkg, as_deb=True)
    deb_case(out, "template-files-json-deep", template_deb(name, b"[" * 100000, []), good_pkg, as_deb=True)
    deb_case(out, "template-package-dotdot", deb("../../x", "1.0", [("./usr/share/code-signing/../../x/files.json",
                                                                       R, fj, {})]), good_pkg, as_deb=True)


# ---- UEFI: signature lists, authenticated updates, variable stores ----

def esl_cases(out, esl, rng):
    n = len(esl)
    for c in sorted({1, 15, 16, 20, 27, 28, 44, n // 2, n - 1}):
        emit(out, "efi", "esl-truncated-at-%d.esl" % c, esl[:c])
    for field, off in (("ListSize", 16), ("HeaderSize", 20), ("SignatureSize", 24)):
        for v in EXTREMES + [15, 16, 27, 28, n, n + 1]:
            emit(out, "efi", "esl-%s=%#x.esl" % (field, v), put(bytearray(esl), off, "<I", v))
    emit(out, "efi", "esl-twice.esl", esl + esl)
    emit(out, "efi", "esl-4096-empty-lists.esl", (esl[:16] + struct.pack("<III", 28, 0, 16)) * 4096)
    for i in range(6):
        emit(out, "efi", "esl-flip-%d.esl" % i, flip(esl, rng.randrange(n), rng))


def auth_cases(out, auth, rng):
    n = len(auth)
    for c in sorted({1, 15, 16, 20, 24, 40, 41, n // 2, n - 1}):
        emit(out, "efi", "auth-truncated-at-%d.auth" % c, auth[:c])
    for v in EXTREMES + [8, 24, 25, n, n + 1]:
        emit(out, "efi", "auth-dwLength=%#x.auth" % v, put(bytearray(auth), 16, "<I", v))
    for i in range(6):
        emit(out, "efi", "auth-flip-%d.auth" % i, flip(auth, rng.randrange(min(n, 600)), rng))


def vars_cases(out, fd, rng):
    n = len(fd)
    hlen = struct.unpack_from("<H", fd, 48)[0]
    first = fd.find(b"\xaa\x55", hlen + 28)
    for c in sorted({16, 40, 56, hlen, hlen + 16, hlen + 28, first + 10, first + 60, n // 2}):
        if 0 < c < n:
            emit(out, "efi", "vars-truncated-at-%d.fd" % c, fd[:c])
    for name, off, fmt in (("FvLength", 32, "<Q"), ("HeaderLength", 48, "<H"), ("StoreSize", hlen + 16, "<I"),
                           ("Var0.NameSize", first + 36, "<I"), ("Var0.DataSize", first + 40, "<I")):
        for v in (0, 1, 0x7FFFFFFF, 0xFFFFFFFFFFFFFFFF, n + 1):
            emit(out, "efi", "vars-%s=%#x.fd" % (name, v), put(bytearray(fd), off, fmt, v))
    for i in range(6):
        emit(out, "efi", "vars-flip-%d.fd" % i, flip(fd, hlen + rng.randrange(min(4096, n - hlen)), rng))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    for a in ("pe", "signed-pe", "sig", "module", "esl", "auth", "vars"):
        ap.add_argument("--" + a)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    read = lambda p: open(p, "rb").read() if p else None
    unsigned, signed = read(args.pe), read(args.signed_pe)
    pe_cases(args.out, unsigned, signed, rng)
    if args.module:
        module_cases(args.out, read(args.module), rng)
    sig_cases(args.out, read(args.sig), rng)
    json_cases(args.out, rng)
    deb_cases(args.out, unsigned)
    esl_cases(args.out, read(args.esl), rng)
    auth_cases(args.out, read(args.auth), rng)
    if args.vars:
        vars_cases(args.out, read(args.vars), rng)
    print(sum(COUNTS.values()))
    for k, v in sorted(COUNTS.items()):
        print("  %s %d" % (k, v))


if __name__ == "__main__":
    main()

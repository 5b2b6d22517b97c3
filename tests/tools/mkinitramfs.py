#!/usr/bin/env python3
"""A minimal initramfs for boot tests: busybox, an /init that reports over
the serial console, and any kernel modules to try under lockdown.

    mkinitramfs.py OUT.cpio.gz BUSYBOX [MODULE.ko|MODULE.ko.xz...]

/init prints "REPROSIGN-KERNEL-UP" with the lockdown mode, tries insmod on
each module (one "REPROSIGN-MODULE name: loaded|refused: error" line),
shows /proc/keys and the kernel's key and lockdown messages; when efivarfs
mounts (efivarfs.ko among the modules), prints the Secure Boot variables
as "REPROSIGN-EFIVAR NAME-GUID BASE64" lines (tests/tools/serial-efivars.py
turns them back into files); prints "REPROSIGN-DONE" and powers off. The archive is cpio "newc", gzip'd."""
import gzip
import os
import sys

INIT = r"""#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t securityfs none /sys/kernel/security 2>/dev/null
echo "REPROSIGN-KERNEL-UP lockdown: $(cat /sys/kernel/security/lockdown 2>/dev/null)"
for m in /modules/*.ko /modules/*.ko.xz; do
    [ -e "$m" ] || continue
    if insmod "$m" 2>/tmp/err; then
        echo "REPROSIGN-MODULE $(basename "$m"): loaded"
    else
        echo "REPROSIGN-MODULE $(basename "$m"): refused: $(cat /tmp/err)"
    fi
done
echo "--- /proc/keys"
cat /proc/keys 2>&1
echo "--- kernel messages"
dmesg | grep -i -e 'x\.509' -e 'lockdown' -e 'module verification' -e 'secure boot' -e 'Loaded' -e 'blacklist'
if mount -t efivarfs efivarfs /sys/firmware/efi/efivars 2>/dev/null; then
    for f in /sys/firmware/efi/efivars/*; do
        n=${f##*/}
        case "${n%-*-*-*-*-*}" in
        PK|KEK|db|dbx|MokListRT*|MokListXRT|SbatLevelRT|SecureBoot|SetupMode|MokIgnoreDB|MokSBStateRT|MokPolicyRT) ;;
        *) continue ;;
        esac
        base64 "$f" | sed "s/^/REPROSIGN-EFIVAR $n /"
    done
fi
echo "REPROSIGN-DONE"
poweroff -f
"""


def entry(ino, name, mode, data=b""):
    fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name) + 1, 0]
    head = b"070701" + b"".join(b"%08x" % f for f in fields) + name.encode() + b"\0"
    head += b"\0" * (-len(head) % 4)
    return head + data + b"\0" * (-len(data) % 4)


def main():
    out, busybox, modules = sys.argv[1], sys.argv[2], sys.argv[3:]
    parts, ino = [], 1
    for d in ("bin", "modules", "proc", "sys", "dev", "tmp"):
        parts.append(entry(ino, d, 0o040755))
        ino += 1
    parts.append(entry(ino, "init", 0o100755, INIT.encode()))
    ino += 1
    parts.append(entry(ino, "bin/busybox", 0o100755, open(busybox, "rb").read()))
    ino += 1
    for m in modules:
        parts.append(entry(ino, "modules/" + os.path.basename(m), 0o100644, open(m, "rb").read()))
        ino += 1
    parts.append(entry(0, "TRAILER!!!", 0))
    tmp = out + ".tmp"
    with gzip.open(tmp, "wb", compresslevel=6) as f:
        f.write(b"".join(parts))
    os.replace(tmp, out)


if __name__ == "__main__":
    main()

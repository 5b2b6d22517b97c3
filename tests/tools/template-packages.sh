#!/bin/bash
# template-packages.sh TEMPLATE.deb: the unsigned packages a signing
# template's files.json names, one per line, as its "packages" keys. The
# one reader of that list for the fixtures script and the tests.
set -o pipefail
dpkg-deb --fsys-tarfile "$1" | tar -xO --wildcards './usr/share/code-signing/*/files.json' |
    python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)["packages"]))'

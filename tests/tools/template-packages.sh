#!/bin/bash
# template-packages.sh TEMPLATE.deb: the unsigned packages a signing
# template's files.json names, one per line, as its "packages" keys. The
# one reader of that list for the fixtures script and the tests.
set -o pipefail
bash "$(dirname "$0")/template-files-json.sh" "$1" |
    python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)["packages"]))'

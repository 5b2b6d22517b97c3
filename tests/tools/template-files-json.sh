#!/bin/bash
# template-files-json.sh TEMPLATE.deb: a signing template's files.json, on
# standard output. The one reader of it out of a template .deb for the
# tests, the fixtures script and the benches.
set -o pipefail
dpkg-deb --fsys-tarfile "$1" | tar -xO --wildcards './usr/share/code-signing/*/files.json'

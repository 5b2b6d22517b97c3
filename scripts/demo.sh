#!/bin/sh
# The main job on built-in defaults, from a fresh Debian 12 machine (root):
# installs the dependencies, builds build/reprosign, then plays both sides
# of Debian's two-stage signing with a demo key held in a SoftHSM2 token:
#
#   signing service: detached signatures for shim-unsigned's fbx64.efi and
#                    mmx64.efi, made through a pkcs11: URI;
#   second stage:    attach them to the unsigned binaries and verify them;
#   reproducibility: Debian's own detached signatures, attached to the same
#                    unsigned binaries, give Debian's signed files byte for byte.
#
# Everything goes under out/demo/. REPROSIGN_SKIP_DEPS=1 skips apt-get.
set -eu
cd "$(dirname "$0")/.."
[ "${REPROSIGN_SKIP_DEPS:-0}" = 1 ] || sh scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
rs=$(pwd)/build/reprosign

demo=$(pwd)/out/demo
rm -rf "$demo"
mkdir -p "$demo/debs" "$demo/token" "$demo/signatures" "$demo/signed"
cd "$demo"

echo "== fetching Debian's packages"
chmod 0777 debs
(cd debs && apt-get download -q shim-unsigned shim-helpers-amd64-signed >/dev/null 2>&1)
for deb in debs/*.deb; do dpkg-deb -x "$deb" root; done
unsigned=$demo/root/usr/lib/shim

echo "== creating a demo key in a SoftHSM2 token"
module=/usr/lib/softhsm/libsofthsm2.so
export SOFTHSM2_CONF="$demo/token/softhsm2.conf"
printf 'directories.tokendir = %s\nobjectstore.backend = file\n' "$demo/token" >"$SOFTHSM2_CONF"
printf '123456' >"$demo/token/pin"
softhsm2-util --init-token --free --label reprosign-demo --pin 123456 --so-pin 12345678 >/dev/null
openssl req -new -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -subj "/CN=reprosign demo db key" \
    -keyout token/key.pem -out token/cert.pem 2>/dev/null
openssl pkcs8 -topk8 -nocrypt -in token/key.pem -outform DER -out token/key.der
openssl x509 -in token/cert.pem -outform DER -out token/cert.der
pkcs11-tool --module "$module" --token-label reprosign-demo --login --pin 123456 \
    --write-object token/key.der --type privkey --id 01 --label demo >/dev/null
pkcs11-tool --module "$module" --token-label reprosign-demo --login --pin 123456 \
    --write-object token/cert.der --type cert --id 01 --label demo >/dev/null
shred -u token/key.pem token/key.der
uri="pkcs11:token=reprosign-demo;object=demo?module-path=$module&pin-source=file:$demo/token/pin"
"$rs" token list --module "$module" | sed 's/^/   /'

echo "== signing service: detached signatures made on the token"
for f in fbx64 mmx64; do
    "$rs" sign --detached --key "$uri;type=private" --cert "$uri;type=cert" \
        "$unsigned/$f.efi" --output "signatures/$f.efi.sig"
    echo "   signatures/$f.efi.sig"
done

echo "== second stage: attach to the unsigned binaries and verify"
for f in fbx64 mmx64; do
    "$rs" attach "signatures/$f.efi.sig" "$unsigned/$f.efi" --output "signed/$f.efi.signed"
    "$rs" verify "signed/$f.efi.signed" --cert token/cert.pem | sed 's/^/   /'
    sbverify --cert token/cert.pem "signed/$f.efi.signed" 2>/dev/null | sed 's/^/   sbverify: /'
done

echo "== reproducibility: Debian's own signatures fit the unsigned build exactly"
debian=$demo/root/usr/lib/shim
for f in fbx64 mmx64; do
    "$rs" detach "$debian/$f.efi.signed" --output "debian-$f.sig"
    "$rs" attach "debian-$f.sig" "$unsigned/$f.efi" --output "debian-$f.efi.signed"
    cmp "debian-$f.efi.signed" "$debian/$f.efi.signed"
    echo "   $f.efi + Debian's signature = Debian's $f.efi.signed, byte for byte"
done
echo "demo done: outputs in out/demo/"

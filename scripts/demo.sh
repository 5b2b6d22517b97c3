#!/bin/sh
# The main job on built-in defaults, from a fresh Debian 12 machine (root):
# installs the dependencies, builds build/reprosign, then plays both sides
# of Debian's two-stage signing with a demo key held in a SoftHSM2 token,
# on Debian's real packages:
#
#   signing service: sign-template takes shim-helpers-amd64-signed-template
#                    and shim-unsigned (.debs, read in place) and makes the
#                    detached signatures and the -signed source package,
#                    with the key used through a pkcs11: URI;
#   second stage:    dpkg-source -x and dpkg-buildpackage build that source
#                    package with the template's own rules (which attach
#                    the signatures with sbattach); the built .deb's EFI
#                    binaries verify against the demo certificate;
#   reproducibility: Debian's own detached signatures, attached to the same
#                    unsigned binaries, give Debian's signed files byte for byte.
#
# The second stage installs shim-unsigned (the template build-depends on the
# exact version).
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
mkdir -p "$demo/debs" "$demo/token"
cd "$demo"

echo "== fetching Debian's packages"
chmod 0777 debs
(cd debs && apt-get download -q shim-unsigned shim-helpers-amd64-signed shim-helpers-amd64-signed-template >/dev/null 2>&1)
for deb in debs/shim-unsigned_*.deb debs/shim-helpers-amd64-signed_*.deb; do dpkg-deb -x "$deb" root; done
mkdir packages && cp debs/shim-unsigned_*.deb packages/
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

echo "== signing service: sign-template with the key on the token"
SOURCE_DATE_EPOCH=$(date +%s) "$rs" sign-template debs/shim-helpers-amd64-signed-template_*.deb \
    --packages packages --key "$uri" --cert "$uri" --output signed
find signed -maxdepth 1 -name '*.dsc' -o -maxdepth 1 -name '*.tar.xz' | sort | sed 's/^/   /'
find signed/signatures -name '*.sig' | sort | sed 's/^/   /'

echo "== second stage: dpkg-source -x, dpkg-buildpackage with the template's rules"
dpkg -i debs/shim-unsigned_*.deb >/dev/null
dpkg-source -x signed/*.dsc stage2 >/dev/null 2>&1
(cd stage2 && dpkg-buildpackage -us -uc -b >../stage2.log 2>&1) || { tail -20 stage2.log; exit 1; }
built=$(ls shim-helpers-amd64-signed_*.deb)
echo "   built $built"
dpkg-deb -x "$built" built
for f in fbx64 mmx64; do
    "$rs" verify "built/usr/lib/shim/$f.efi.signed" --cert token/cert.pem | sed "s/^/   $f.efi.signed: /"
    sbverify --cert token/cert.pem "built/usr/lib/shim/$f.efi.signed" 2>/dev/null | sed "s/^/   $f.efi.signed: sbverify: /"
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

#!/bin/bash
# Encrypted key files (PKCS#8 and traditional PEM): the passphrase from
# --pass file:PATH or env:VAR, from KBUILD_SIGN_PIN (as the kernel's
# sign-file reads it), or typed at a terminal with echo off; never from
# argv. Signatures equal those of the same key unencrypted, and for a
# module, those of sign-file with the encrypted key.
. "$TESTS_DIR/lib.sh"
need_fixtures kernel
need_fixtures shim
need_tool script
SIGN_FILE=/usr/lib/linux-kbuild-6.1/scripts/sign-file
need_tool "$SIGN_FILE"
export SOURCE_DATE_EPOCH=1700000000

cd "$WORK"
openssl req -new -x509 -newkey rsa:2048 -passout pass:s3cret -sha256 -days 3650 -subj "/CN=encrypted test key" \
    -keyout pkcs8.key -out key.crt 2>/dev/null
openssl rsa -in pkcs8.key -passin pass:s3cret -aes256 -traditional -passout pass:s3cret -out trad.key 2>/dev/null
openssl pkey -in pkcs8.key -passin pass:s3cret -out plain.key 2>/dev/null
printf 's3cret\n' >pw
cp "$FIXTURES/root/shim-unsigned/usr/lib/shim/fbx64.efi" app.efi
module=$(find "$FIXTURES"/kernel/lib/modules/*/kernel -name '*.ko' | sort | head -n 1)
"$REPROSIGN" strip "$module" --output m.ko
"$REPROSIGN" sign --key plain.key --cert key.crt --detached --output plain.sig app.efi

check "PKCS#8 encrypted key, --pass file:" bash -c "
    '$REPROSIGN' sign --key pkcs8.key --pass file:pw --cert key.crt --detached --output a.sig app.efi && cmp a.sig plain.sig"
check "traditional encrypted PEM, --pass env:" bash -c "
    P=s3cret '$REPROSIGN' sign --key trad.key --pass env:P --cert key.crt --detached --output b.sig app.efi && cmp b.sig plain.sig"
check "KBUILD_SIGN_PIN, as sign-file reads it" bash -c "
    KBUILD_SIGN_PIN=s3cret '$REPROSIGN' sign --key pkcs8.key --cert key.crt --detached --output c.sig app.efi && cmp c.sig plain.sig"
# Typed once the prompt is up: the terminal then no longer echoes, and
# input typed before it would be flushed, as a real terminal's would.
type_after_prompt() {
    for _ in $(seq 300); do grep -q 'Passphrase for' tty.out 2>/dev/null && break; sleep 0.1; done
    printf 's3cret\n'
}
type_after_prompt | script -qec "'$REPROSIGN' sign --key pkcs8.key --cert key.crt --detached --output d.sig app.efi" \
    /dev/null >tty.out
check "typed at the terminal (a pty)" cmp d.sig plain.sig
check "... after a prompt naming the key, with echo off" bash -c "grep -q 'Passphrase for pkcs8.key:' tty.out && ! grep -q s3cret tty.out"
refuses "no passphrase and no terminal" "$WORK/e.sig" bash -c \
    "setsid '$REPROSIGN' sign --key pkcs8.key --cert key.crt --detached --output e.sig app.efi </dev/null"
refuses "a wrong passphrase" "$WORK/f.sig" \
    env KBUILD_SIGN_PIN=wrong "$REPROSIGN" sign --key pkcs8.key --cert key.crt --detached --output f.sig app.efi
rc=0; "$REPROSIGN" sign --key pkcs8.key --pass pass:s3cret --cert key.crt --detached --output g.sig app.efi 2>g.err || rc=$?
check "--pass pass:... is a usage error (the passphrase would be on argv)" bash -c "[ $rc = 2 ] && [ ! -e g.sig ] && grep -q 'shell history' g.err"
check "a module signed with the encrypted key equals sign-file's, KBUILD_SIGN_PIN for both" bash -c "
    KBUILD_SIGN_PIN=s3cret '$SIGN_FILE' -d sha256 pkcs8.key key.crt m.ko &&
    KBUILD_SIGN_PIN=s3cret '$REPROSIGN' sign --key pkcs8.key --cert key.crt --detached --output m.sig m.ko &&
    cmp m.ko.p7s m.sig"
finish

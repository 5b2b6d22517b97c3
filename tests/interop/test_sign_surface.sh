#!/bin/bash
# sign and detach behave like the tools people know: a module keeps its .ko
# suffix (modinfo reads it), --in-place, a warning when an image is already
# signed (--append/--replace say what is meant), a warning for a hash most
# firmware refuses, detach to standard output.
. "$TESTS_DIR/lib.sh"
need_fixtures kernel
need_fixtures shim
need_tool modinfo; need_tool sbverify; need_tool script
make_key db
cd "$WORK"
module=$(find "$FIXTURES"/kernel/lib/modules/*/kernel -name '*.ko' | sort | head -n 1)
"$REPROSIGN" strip "$module" --output m.ko
cp "$FIXTURES/root/shim-unsigned/usr/lib/shim/fbx64.efi" app.efi
sign() { "$REPROSIGN" sign --key db.key --cert db.crt "$@"; }

check "a module's signed copy is NAME.signed.ko" bash -c "$(declare -f sign); cd '$WORK'; REPROSIGN='$REPROSIGN' sign m.ko && test -f m.signed.ko"
check "... which modinfo reads" bash -c "modinfo m.signed.ko | grep -q '^signer: *reprosign test db'"
cp m.ko inplace.ko
check "--in-place signs the file itself" bash -c "$(declare -f sign); REPROSIGN='$REPROSIGN' sign --in-place inplace.ko && cmp inplace.ko m.signed.ko"
refuses "a signed module again, without --replace" "$WORK/again.ko" sign m.signed.ko --output again.ko
check "... names --replace" grep -q -- '--replace' "$WORK/.err"
check "--replace re-signs it" bash -c "$(declare -f sign); REPROSIGN='$REPROSIGN' sign --replace m.signed.ko --output again.ko && cmp again.ko m.signed.ko"

sign app.efi --output one.efi 2>/dev/null
sign one.efi --output two.efi 2>two.err
check "an already-signed image gets a second signature" test "$("$REPROSIGN" list two.efi --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["signatures"]))')" = 2
check "... with a warning naming --append and --replace" grep -q 'already signed (1 signature(s)).*--append.*--replace' two.err
sign --append one.efi --output two-quiet.efi 2>append.err
check "--append says it is meant: no warning" test ! -s append.err
sign --replace one.efi --output replaced.efi 2>replace.err
check "--replace drops the old signature: one left, and sbverify takes it" bash -c "
    test ! -s replace.err && [ \"\$('$REPROSIGN' list replaced.efi --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)[\"signatures\"]))')\" = 1 ] &&
    sbverify --cert db.crt replaced.efi >/dev/null"
rc=0; sign --replace --append one.efi --output x.efi 2>/dev/null || rc=$?
check "--replace with --append is a usage error" test "$rc" = 2
sign --hash sha384 app.efi --output sha384.efi 2>sha384.err
check "sha384 on an EFI image warns that most firmware takes only SHA-256" grep -q 'most firmware accepts only SHA-256' sha384.err
sign --hash sha384 m.ko --output m384.ko 2>m384.err
check "... but not on a module" test ! -s m384.err

"$REPROSIGN" detach one.efi --output one.sig
check "detach without --output writes the DER to standard output" bash -c "'$REPROSIGN' detach one.efi >stdout.sig && cmp stdout.sig one.sig"
script -qec "'$REPROSIGN' detach one.efi" /dev/null >tty.out 2>&1 || true
check "... but not to a terminal" grep -q 'binary DER: give --output, or redirect' tty.out
commands=$("$REPROSIGN" --help | sed -n 's/^  \([a-z-]*\) .*/\1/p')
check "'reprosign help CMD' is 'CMD --help', for every command" bash -c "
    for c in $(echo $commands); do diff <('$REPROSIGN' help \$c) <('$REPROSIGN' \$c --help) >/dev/null || { echo \$c; exit 1; }; done"
finish

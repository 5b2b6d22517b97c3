#!/bin/bash
# Every command has --help, a man page and bash completion, all rendered
# from the one command table (reprosign __doc), and the man pages are
# well-formed roff.
. "$TESTS_DIR/lib.sh"

commands=$("$REPROSIGN" --help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 {print $1}')
check "reprosign --help lists the commands" test -n "$commands"
check "the usage texts name every long option" "$REPROSIGN" __doc check
check "man pages render" "$REPROSIGN" __doc man "$WORK"
check "the completion script renders" "$REPROSIGN" __doc completion "$WORK/completion"
check "the completion script is valid bash" bash -n "$WORK/completion"
check "reprosign(1) exists" test -s "$WORK/reprosign.1"

complete_words() {  # complete_words WORD...: what completion offers for the last word
    bash -c '. "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _reprosign; echo "${COMPREPLY[*]}"' "$WORK/completion" "$@"
}
for c in $commands; do
    check "$c --help prints its usage and exits 0" bash -c "'$REPROSIGN' $c --help | grep -q '^usage: reprosign $c'"
    check "reprosign-$c.1 exists and names the command" grep -q "^reprosign-$c \\\\- " "$WORK/reprosign-$c.1"
    check "reprosign.1 lists $c" grep -q "^\\\\fB$c\\\\fR" "$WORK/reprosign.1"
    check "completion offers $c" bash -c "[[ ' $(complete_words reprosign "${c:0:3}") ' == *' $c '* ]]"
    check "completion offers $c's options" bash -c "[[ '$(complete_words reprosign "$c" --)' == *--help* ]]"
done
for s in $("$REPROSIGN" efi --help | awk '/^example:/ {exit} /^  [a-z-]+ / {print $1}'); do
    check "efi $s --help" bash -c "'$REPROSIGN' efi $s --help | grep -q '^usage: reprosign efi $s'"
    check "completion offers efi $s" bash -c "[[ ' $(complete_words reprosign efi "$s") ' == *' $s '* ]]"
done
check "completion offers hash names after --hash" bash -c "[[ '$(complete_words reprosign sign --hash sha3)' == sha384 ]]"
if command -v groff >/dev/null; then
    for page in "$WORK"/*.1; do
        check "$(basename "$page") has no roff warnings" bash -c "! groff -man -Tutf8 -ww -z '$page' 2>&1 | grep ."
    done
fi
finish

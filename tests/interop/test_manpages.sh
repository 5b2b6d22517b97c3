#!/bin/bash
# The man pages, --help and the bash and zsh completion, all rendered from
# the command table: checked with man(1) itself, and completion driven
# through bash's own completion machinery and zsh's compinit.
. "$TESTS_DIR/lib.sh"
need_tool man
need_tool zsh

check "the pages render" "$REPROSIGN" __doc man "$WORK"
check "the bash completion renders" "$REPROSIGN" __doc completion "$WORK/completion"
check "the zsh completion renders" "$REPROSIGN" __doc zsh "$WORK/_reprosign"
check "every option is documented and every command has an example" "$REPROSIGN" __doc check
# The file format pages, written by hand.
cp "$TESTS_DIR"/../docs/man/*.5 "$WORK/"
check "reprosign-log(5) is among them" test -f "$WORK/reprosign-log.5"

for page in "$WORK"/*.[15]; do
    name=$(basename "$page")
    check "$name: man --warnings reports nothing" bash -c "
        out=\$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l '$page' 2>&1 >/dev/null); [ -z \"\$out\" ] || { echo \"\$out\"; false; }"
    check "$name: no 'See DESCRIPTION'" bash -c "! grep -q 'See DESCRIPTION' '$page'"
done
for section in NAME SYNOPSIS DESCRIPTION OPTIONS 'EXIT STATUS' ENVIRONMENT FILES EXAMPLES; do
    for page in "$WORK"/reprosign*.1; do
        grep -q "^\.SH $section\$" "$page" || fail "$(basename "$page") has no $section section"
    done
done
for section in NAME SYNOPSIS DESCRIPTION FILES EXAMPLES 'SEE ALSO'; do
    for page in "$WORK"/reprosign*.5; do
        grep -q "^\.SH $section\$" "$page" || fail "$(basename "$page") has no $section section"
    done
done
for ss in Tiles 'Entry bundles' Checkpoint Entries 'Leaf index' Keys; do
    grep -qx ".SS $ss" "$WORK/reprosign-log.5" || fail "reprosign-log(5) has no '$ss' subsection"
done
for page in reprosign-log.1 reprosign-service.1 reprosign.1 reprosign-service.json.5; do
    check "$page points to reprosign-log(5)" grep -qF 'reprosign\-log\fR(5)' "$WORK/$page"
done
check "service page: exit status 3 for a refused request" grep -q 'exits 1 when a request failed for now' "$WORK/reprosign-service.1"
check "service page: the systemd environment" bash -c "grep -q NOTIFY_SOCKET '$WORK/reprosign-service.1' && grep -q LISTEN_FDS '$WORK/reprosign-service.1' &&
    grep -q JOURNAL_STREAM '$WORK/reprosign-service.1' && grep -q WATCHDOG_USEC '$WORK/reprosign-service.1'"
check "sign page: SOURCE_DATE_EPOCH, REPROSIGN_PKCS11_PIN and KBUILD_SIGN_PIN" bash -c "grep -q SOURCE_DATE_EPOCH '$WORK/reprosign-sign.1' &&
    grep -q REPROSIGN_PKCS11_PIN '$WORK/reprosign-sign.1' && grep -q KBUILD_SIGN_PIN '$WORK/reprosign-sign.1'"
check "no page names the test-only REPROSIGN_REQUIRE_ALL" bash -c "! grep -l REPROSIGN_REQUIRE_ALL '$WORK'/*.[15]"
check "sign --help shows the default hash" bash -c "'$REPROSIGN' sign --help | grep -A3 -- '--hash' | grep -q '(default: sha256)'"
check "sign-template and attach-tree: -q, --quiet in --help and in the page" bash -c "
    for c in sign-template attach-tree; do '$REPROSIGN' \$c --help | grep -q -- '^  -q, --quiet\$' &&
        man_text() { LC_ALL=C.UTF-8 MANWIDTH=200 man -l \"\$1\" 2>/dev/null | col -bx; } &&
        man_text '$WORK/reprosign-'\$c.1 | grep -q -- '^ *-q, --quiet' || exit 1; done"
check "attach-tree --help shows --jobs' default" bash -c "'$REPROSIGN' attach-tree --help | grep -A2 -- '--jobs N' | grep -q 'default: one per core'"

# Every long option of every command (and efi subcommand) in its page and
# in its --help; the tables are what getopt accepts.
man_text() { LC_ALL=C.UTF-8 MANWIDTH=200 man -l "$1" 2>/dev/null | col -bx; }
options_of() {  # the long options --help lists, from the "options:" section
    "$REPROSIGN" "$@" --help | sed -n '/^options:/,/^$/p' | sed -n 's/^  \(-[a-z], \)\{0,1\}\(--[a-z0-9-]*\).*/\2/p'
}
commands=$("$REPROSIGN" --help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 {print $1}')
efi_subs=$("$REPROSIGN" efi --help | awk '/^example:/ {exit} /^  [a-z-]+ / {print $1}')
for c in $commands; do
    man_text "$WORK/reprosign-$c.1" >"$WORK/$c.txt"
    check "$c: --help and 'help $c' print the same" bash -c "cmp -s <('$REPROSIGN' $c --help) <('$REPROSIGN' help $c)"
    check "$c: --help has an example" bash -c "'$REPROSIGN' $c --help | grep -q '^example:'"
done
for c in $commands; do
    [ "$c" = efi ] && continue
    check "$c lists options in --help" test -n "$(options_of "$c")"
    for o in $(options_of "$c"); do
        grep -Eq -- "^ *(-[a-z], )?$o\b" "$WORK/$c.txt" || fail "$c: $o is not in reprosign-$c(1)'s OPTIONS"
    done
done
for s in $efi_subs; do
    check "efi $s: --help and 'help efi $s' print the same" bash -c "cmp -s <('$REPROSIGN' efi $s --help) <('$REPROSIGN' help efi $s)"
    check "efi $s lists options in --help" test -n "$(options_of efi "$s")"
    for o in $(options_of efi "$s"); do
        grep -Eq -- "^ *(-[a-z], )?$o\b" "$WORK/efi.txt" || fail "efi $s: $o is not in reprosign-efi(1)"
    done
done
# ... and getopt's own tables: every option the binary accepts is in --help.
for c in sign sign-template verify chain service log token; do
    help=$("$REPROSIGN" "$c" --help)
    for o in $(grep -o '{ "[a-z0-9-]*", [a-z_]*_argument' "$TESTS_DIR/../src/cli/cmd_${c//-/_}.c" | sed 's/{ "\([^"]*\)".*/--\1/' | grep -v -- --help); do
        grep -Eq -- "^  (-[a-z], )?$o\b" <<<"$help" || fail "$c: $o is accepted but not in --help"
    done
done

# bash: set COMP_WORDS/COMP_CWORD and call the function `complete` names.
complete_words() {
    bash -c '. "$0"; f=$(complete -p reprosign | sed -n "s/.*-F \([^ ]*\) .*/\1/p")
             COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
             "$f"; printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' "$WORK/completion" "$@"
}
expect() {  # expect "WORDS..." "REPLY"
    local got
    got=$(complete_words $1)
    [ "$got" = "$2 " ] && pass "complete '$1' -> $2" || fail "complete '$1': expected '$2', got '$got'"
}
check "bash: the script is valid" bash -n "$WORK/completion"
expect "reprosign service re" "release retry"
expect "reprosign service ''" "--help init release retry run status"
expect "reprosign log ''" "--help append consistency cosign keygen migrate monitor prove verify verify-proof"
expect "reprosign token l" "list"
expect "reprosign efi sh" "shim-var"
expect "reprosign efi k" "keygen"
expect "reprosign sign --h" "--hash --help"
expect "reprosign sign --hash ''" "sha256 sha384 sha512"
expect "reprosign efi sign-var --name ''" "KEK PK db dbx"
expect "reprosign efi keygen --b" "--bits"
expect "reprosign efi enroll --mic" "--microsoft --microsoft="
expect "reprosign service status --status p" "pending published"
expect "reprosign service run --o" "--once"
expect "reprosign chain --sbat-policy ''" "automatic latest"
expect "reprosign attach-tree --q" "--quiet"
expect "reprosign log consistency --j" "--json"
expect "reprosign sign-template -q" "-q"
expect "reprosign help sign-" "sign-blob sign-template"
expect "reprosign sig" "sign sign-blob sign-template"
mkdir -p "$WORK/tree/subdir" && touch "$WORK/tree/file.efi"
expect "reprosign sign-template --packages $WORK/tree/" "$WORK/tree/subdir"
expect "reprosign sign $WORK/tree/fi" "$WORK/tree/file.efi"
expect "reprosign sign --key $WORK/tree/fi" "$WORK/tree/file.efi"
for c in $commands; do
    [ "$c" = efi ] && continue
    case $c in service) verb=status ;; log) verb=verify ;; attestation) verb=verify ;; token) verb=list ;; *) verb= ;; esac
    got=$(complete_words reprosign "$c" $verb --)
    for o in $(options_of "$c"); do
        [[ " $got " == *" $o "* ]] || fail "bash: $c -- does not offer $o"
    done
done
# pkcs11: URIs from `reprosign token list`, with a module that holds a key.
if command -v softhsm2-util >/dev/null && [ -e /usr/lib/softhsm/libsofthsm2.so ]; then
    export SOFTHSM2_CONF="$WORK/softhsm2.conf"
    mkdir -p "$WORK/tokens" && echo "directories.tokendir = $WORK/tokens" >"$SOFTHSM2_CONF"
    softhsm2-util --init-token --free --label comptest --pin 1234 --so-pin 1234 >/dev/null
    mkdir -p "$WORK/bin" && cat >"$WORK/bin/reprosign" <<SH
#!/bin/sh
exec '$REPROSIGN' "\$@" --module /usr/lib/softhsm/libsofthsm2.so
SH
    chmod +x "$WORK/bin/reprosign"
    check "bash: --key pkcs11: offers the token's URI" bash -c "
        PATH='$WORK/bin':\$PATH; . '$WORK/completion'; COMP_WORDS=(reprosign sign --key pkcs11:); COMP_CWORD=3; _reprosign
        [[ \${COMPREPLY[0]} == pkcs11:*token=comptest* ]]"
    check "bash: a URI split at ':' by bash completes after the colon" bash -c "
        PATH='$WORK/bin':\$PATH; . '$WORK/completion'; COMP_WORDS=(reprosign sign --cert pkcs11 : mod); COMP_CWORD=5; _reprosign
        [[ \${COMPREPLY[0]} == model=*token=comptest* ]]"
fi
mkdir -p "$WORK/nomodule" && cat >"$WORK/nomodule/reprosign" <<SH
#!/bin/sh
exec '$REPROSIGN' "\$@" --module '$WORK/no-such-module.so'
SH
chmod +x "$WORK/nomodule/reprosign"
for path in "$WORK/nomodule:$PATH" /nonexistent; do
    check "bash: no PKCS#11 module$([ "$path" = /nonexistent ] && echo ', no reprosign on PATH'): --key pkcs11: stays quiet" bash -c "
        PATH='$path'; . '$WORK/completion'; COMP_WORDS=(reprosign sign --key pkcs11:); COMP_CWORD=3
        out=\$(_reprosign 2>&1); [ -z \"\$out\" ]"
done

# zsh: the completion loads through compinit, from fpath and when sourced.
check "zsh: the file parses" zsh -n "$WORK/_reprosign"
check "zsh: compinit finds it on fpath" bash -c "
    [ \"\$(zsh -fc 'fpath=($WORK \$fpath); autoload -U compinit; compinit -u -D; print -r -- \$_comps[reprosign]; autoload +X _reprosign' 2>&1)\" = _reprosign ]"
check "zsh: sourcing it after compinit registers it, without a word on stderr" bash -c "
    out=\$(zsh -fc 'autoload -U compinit; compinit -u -D; source $WORK/_reprosign; print -r -- \$_comps[reprosign]' 2>&1); [ \"\$out\" = _reprosign ]"
# ... and completes, typed into an interactive zsh on a pty.
zexpect() {  # zexpect "WORDS" "REPLY"
    local got
    got=$(timeout 30 zsh -f "$TESTS_DIR/tools/zsh-complete.zsh" "$WORK" "$1" | tr '\n' ' ')
    [ "$got" = "$2 " ] && pass "zsh: '$1' -> $2" || fail "zsh: '$1': expected '$2', got '$got'"
}
zexpect "reprosign sig" "sign sign-blob sign-template"
zexpect "reprosign service re" "release retry"
zexpect "reprosign sign --ha" "--hash"
zexpect "reprosign sign --hash sha" "sha256 sha384 sha512"
zexpect "reprosign efi ke" "keygen"
zexpect "reprosign efi sign-var --name " "KEK PK db dbx"
zexpect "reprosign chain --sbat-p" "--sbat-policy"
check "zsh: sign-template's -q is offered beside --quiet" grep -q "^ *'\*-q\[Print neither progress" "$WORK/_reprosign"
if [ -x "$WORK/bin/reprosign" ]; then
    check "zsh: --key pkcs11: offers the token's URI" bash -c "
        PATH='$WORK/bin':\$PATH timeout 30 zsh -f '$TESTS_DIR/tools/zsh-complete.zsh' '$WORK' 'reprosign sign --key pkcs11:' |
        grep -q '^pkcs11:.*token=comptest'"
fi
finish

#!/bin/bash
# The service's signed upload, at the edges: the configuration's checks,
# an upload_command instead of a queue directory, a key that cannot sign
# (the request fails, nothing goes out unsigned), a failing command, and an
# embargoed request uploaded only at 'service release'. The archive round
# trip with reprepro is test_archive_roundtrip.sh.
. "$TESTS_DIR/lib.sh"
need_fixtures shim
. "$TESTS_DIR/interop/service_lib.sh"
need_tool dpkg-source; need_tool dpkg-genchanges

repo=$WORK/repo
make_repo "$repo"
upload_home=$WORK/upload-gnupg
mkdir -p -m 700 "$upload_home"
gpg --homedir "$upload_home" --batch --quiet --passphrase '' --quick-gen-key 'upload test <upload@example.org>' ed25519 sign never 2>/dev/null
upload_fpr=$(gpg --homedir "$upload_home" --with-colons --list-keys | awk -F: '/^fpr/ { print $10; exit }')
gpg --homedir "$upload_home" --batch --export "$upload_fpr" >"$WORK/upload.gpg"
mkdir -p "$WORK/incoming"

# ---- the configuration ----
bad_config() {  # bad_config NAME EXTRA-JSON EXPECTED-MESSAGE
    write_config "bad-$1" "$repo" "$2"
    refuses "config refused: $1" "" svc init --state "$WORK/state-bad-$1" --config "$WORK/bad-$1.json"
    check "... saying why" grep -qF "$3" "$WORK/.err"
}
bad_config shortkey ', "upload_key": "ABCDEF0123456789", "incoming": "/tmp"' "is not a full OpenPGP fingerprint"
bad_config nowhere ", \"upload_key\": \"$upload_fpr\"" "needs \"incoming\" or \"upload_command\""
bad_config nokey ', "incoming": "/tmp"' "need an \"upload_key\""
bad_config relative ", \"upload_key\": \"$upload_fpr\", \"incoming\": \"incoming\"" "is not an absolute path"
bad_config command ", \"upload_key\": \"$upload_fpr\", \"upload_command\": \"dput\"" "\"upload_command\" must be a list"

# ---- into a queue directory, embargo held until release ----
write_config main "$repo" ", \"embargoed_suites\": [\"bookworm-embargoed\"], \"upload_key\": \"$upload_fpr\", \"gnupg_home\": \"$upload_home\", \"incoming\": \"$WORK/incoming\""
write_requests "$WORK/main-requests.json" true
check "service init" svc init --state "$WORK/state" --config "$WORK/main.json"
check "service run --once" svc run --state "$WORK/state" --once
check "the published request is uploaded: .dsc, .tar.xz, _source.changes" bash -c "
    cd '$WORK/incoming' && [ \$(ls -A | wc -l) = 3 ] && ls *1+16.1+2~deb12u1.dsc *1+16.1+2~deb12u1.tar.xz *1+16.1+2~deb12u1_source.changes"
check "the embargoed one is signed and held, and not uploaded" bash -c "
    [ '$(status_of "$WORK/state" "$id2")' = held ] && ! ls '$WORK/incoming' | grep -q sec1"
check "both upload files verify with the upload key" bash -c "
    cd '$WORK/incoming' && gpgv --keyring '$WORK/upload.gpg' *.dsc && gpgv --keyring '$WORK/upload.gpg' *_source.changes"
check "the .changes lists the .dsc as uploaded (signed)" bash -c "
    cd '$WORK/incoming' && grep -q \"\$(sha256sum *.dsc | cut -d' ' -f1) \$(stat -c %s *.dsc) .*\\.dsc\" *_source.changes"
check "a second pass uploads nothing again" bash -c "
    svc() { '$REPROSIGN' service \"\$@\"; }; svc run --state '$WORK/state' --once && [ \$(ls -A '$WORK/incoming' | wc -l) = 3 ]"
check "service release" svc release --state "$WORK/state" "$id2"
check "... uploads the embargoed request" bash -c "ls '$WORK/incoming'/*sec1_source.changes '$WORK/incoming'/*sec1.dsc"

# ---- a key that cannot sign: the request fails, nothing is uploaded ----
mkdir -p "$WORK/incoming2" "$WORK/empty-gnupg" && chmod 700 "$WORK/empty-gnupg"
write_config nokey "$repo" ", \"upload_key\": \"$upload_fpr\", \"gnupg_home\": \"$WORK/empty-gnupg\", \"incoming\": \"$WORK/incoming2\""
check "service init (upload key missing from its GnuPG home)" svc init --state "$WORK/state2" --config "$WORK/nokey.json"
check "service run --once fails" bash -c "! '$REPROSIGN' service run --state '$WORK/state2' --once 2>'$WORK/nokey.err'"
check "... naming the key" grep -q "upload key $upload_fpr: no such secret key" "$WORK/nokey.err"
check "... the request is marked failed" test "$(status_of "$WORK/state2" "$id1")" = failed
check "... and nothing reached incoming" test -z "$(ls -A "$WORK/incoming2")"

# ---- upload_command in place of a queue directory ----
# The service gives its children a minimal environment (no secrets pass),
# so the record's path is written into the script itself.
cat >"$WORK/fake-dput" <<SH
#!/bin/sh
# Records its arguments and the files beside the .changes, as dput sees them.
echo "\$@" >>"$WORK/record"
ls "\$(dirname "\$2")" >>"$WORK/record"
SH
chmod +x "$WORK/fake-dput"
write_config cmd "$repo" ", \"upload_key\": \"$upload_fpr\", \"gnupg_home\": \"$upload_home\", \"upload_command\": [\"$WORK/fake-dput\", \"-u\"]"
check "service init (upload_command)" svc init --state "$WORK/state3" --config "$WORK/cmd.json"
check "service run --once" svc run --state "$WORK/state3" --once
check "upload_command ran with its options and the signed .changes" bash -c "
    head -n 1 '$WORK/record' | grep -q '^-u /.*_source.changes$'"
check "... with the .dsc and .tar.xz beside it" bash -c "grep -q '\\.dsc$' '$WORK/record' && grep -q '\\.tar\\.xz$' '$WORK/record'"
write_config failcmd "$repo" ", \"upload_key\": \"$upload_fpr\", \"gnupg_home\": \"$upload_home\", \"upload_command\": [\"/bin/sh\", \"-c\", \"echo queue unreachable >&2; exit 3\", \"x\"]"
check "service init (a failing upload_command)" svc init --state "$WORK/state4" --config "$WORK/failcmd.json"
check "service run --once fails" bash -c "! '$REPROSIGN' service run --state '$WORK/state4' --once 2>'$WORK/failcmd.err'"
check "... reporting the command's failure" grep -q "upload_command: /bin/sh failed (exit 3): queue unreachable" "$WORK/failcmd.err"
check "... the request is marked failed" test "$(status_of "$WORK/state4" "$id1")" = failed
finish

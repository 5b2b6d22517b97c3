#!/bin/bash
# A full disk. Every command that writes, given a file system with no room
# (a small tmpfs, in a mount namespace of the test's own), exits 1 with one
# line naming the file and "No space left on device", and leaves the file
# system as it found it: no output, no temporary, no directory it made.
# The transparency log stays whole and goes on once there is room; the
# service keeps its signed requests and publishes them on the next pass.
if [ -z "${RS_FULL_DISK_NS:-}" ]; then
    unshare_mount=$([ "$(id -u)" = 0 ] && echo "unshare -m" || echo "unshare -rm")
    if $unshare_mount true 2>/dev/null; then
        RS_FULL_DISK_NS=1 exec $unshare_mount bash "$0" "$@"
    fi
    . "$TESTS_DIR/lib.sh"
    skip "a tmpfs of the test's own needs a mount namespace, which this machine does not give"
fi
. "$TESTS_DIR/lib.sh"
need_fixtures shim
need_fixtures kernel
need_tool sbverify
. "$TESTS_DIR/interop/service_lib.sh"

full=$WORK/full
mkdir -p "$full"
mount -t tmpfs -o size=256k tmpfs "$full" || skip "cannot mount a tmpfs"
trap 'umount "$full" 2>/dev/null; rm -rf "$WORK"' EXIT

# fill: no byte left (a file at a time, so the filler is one file).
fill() { dd if=/dev/zero of="$full/filler" bs=4k 2>/dev/null; true; }
unfill() { rm -f "$full/filler"; }

# no_room "what" command...: exit status 1, one line that names a file and
# ends "No space left on device", and the tmpfs as it was before.
no_room() {
    local what=$1 before rc=0
    shift
    before=$(find "$full" | sort)
    "$@" >"$WORK/.out" 2>"$WORK/.err" || rc=$?
    if [ "$rc" -ne 1 ]; then
        fail "$what: exit status $rc, expected 1"; sed 's/^/    /' "$WORK/.err"; return
    fi
    if [ "$(wc -l <"$WORK/.err")" -ne 1 ] || ! grep -q "^reprosign: .*$full[/:].*No space left on device\$" "$WORK/.err"; then
        fail "$what: not one 'reprosign: FILE: ... No space left on device' line"; sed 's/^/    /' "$WORK/.err"; return
    fi
    if [ "$(find "$full" | sort)" != "$before" ]; then
        fail "$what: left something behind"; diff <(echo "$before") <(find "$full" | sort) | sed 's/^/    /'; return
    fi
    pass "$what ($(cat "$WORK/.err"))"
}

# pass_fails "what" STATE PATTERN: one pass of the service exits 1, and
# its errors have a line that matches PATTERN (grep).
pass_fails() {
    local rc=0
    svc run --state "$2" --once >/dev/null 2>"$WORK/pass.err" || rc=$?
    check "$1: the pass fails (exit 1)" test "$rc" -eq 1
    check "... saying where there was no room" grep -q "$3" "$WORK/pass.err"
}

img=$unsigned_root/usr/lib/shim/shimx64.efi
module=$(find "$(readlink -f "$FIXTURES/kernel")/lib/modules" -name 'nlmon.ko' | head -n 1)
[ -n "$module" ] || skip "no nlmon.ko in the kernel fixtures"
"$REPROSIGN" strip "$module" --output "$WORK/nlmon.ko" 2>/dev/null || cp "$module" "$WORK/nlmon.ko"
"$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$img" --output "$WORK/fb.signed"
"$REPROSIGN" detach "$WORK/fb.signed" --output "$WORK/fb.sig"

# ---- one file out: it does not fit (256 KiB against 1 MB), or nothing does ----
no_room "sign, the image does not fit" "$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$img" \
    --output "$full/shim.efi"
no_room "attach, the image does not fit" "$REPROSIGN" attach "$WORK/fb.sig" "$img" --output "$full/shim.efi"
no_room "strip, the image does not fit" "$REPROSIGN" strip "$WORK/fb.signed" --output "$full/shim.efi"
fill
no_room "sign, a module with no room" "$REPROSIGN" sign --key "$WORK/db.key" --cert "$WORK/db.crt" \
    "$WORK/nlmon.ko" --output "$full/nlmon.ko"
no_room "detach with no room" "$REPROSIGN" detach "$WORK/fb.signed" --output "$full/fb.sig"
no_room "efi keygen with no room" "$REPROSIGN" efi keygen "$full/keys"
no_room "efi enroll with no room" "$REPROSIGN" efi enroll --vars /usr/share/OVMF/OVMF_VARS_4M.fd \
    --pk "$WORK/db.crt" --kek "$WORK/db.crt" --db "$WORK/db.crt" --output "$full/VARS.fd"
unfill

# ---- sign-template: its output, and its temporary store ($TMPDIR) ----
mkdir -p "$WORK/pkgs"
ln -s "$template_deb" "$unsigned_deb" "$WORK/pkgs/"
fill
no_room "sign-template with no room for its output" "$REPROSIGN" sign-template --quiet "$template_deb" \
    --packages "$WORK/pkgs" --key "$WORK/db.key" --cert "$WORK/db.crt" --output "$full/out"
no_room "sign-template with no room in TMPDIR" env TMPDIR="$full" "$REPROSIGN" sign-template --quiet \
    "$template_deb" --packages "$WORK/pkgs" --key "$WORK/db.key" --cert "$WORK/db.crt" --output "$WORK/out"
check "... and it made no output either" test ! -e "$WORK/out"
unfill
check "sign-template where there is room" "$REPROSIGN" sign-template --quiet "$template_deb" \
    --packages "$WORK/pkgs" --key "$WORK/db.key" --cert "$WORK/db.crt" --output "$WORK/out"

# ---- attach-tree: two images of 1 MB into 256 KiB ----
sigs=$WORK/out/signatures/shim-unsigned
no_room "attach-tree into a new output root" "$REPROSIGN" attach-tree --quiet --signatures "$sigs" \
    --root "$unsigned_root" --output "$full/att" --cert "$WORK/db.crt"
mkdir -p "$full/pre/usr"
no_room "attach-tree into an output root that exists (it keeps its directories)" "$REPROSIGN" attach-tree \
    --quiet --signatures "$sigs" --root "$unsigned_root" --output "$full/pre" --cert "$WORK/db.crt"
check "... its usr/ is still there" test -d "$full/pre/usr"
rm -rf "$full/pre"
mount -o remount,size=8m "$full"
check "attach-tree where there is room" "$REPROSIGN" attach-tree --quiet --signatures "$sigs" \
    --root "$unsigned_root" --output "$full/att" --cert "$WORK/db.crt"
check "... and the images verify" sbverify --cert "$WORK/db.crt" "$full/att/usr/lib/shim/fbx64.efi"
rm -rf "$full/att"

# ---- the transparency log: appended until the disk is full ----
# 1.5 MiB: room for the leaf index's buckets and a few thousand entries.
mount -o remount,size=1536k "$full"
"$REPROSIGN" log keygen example.org/full-disk --output "$WORK/log" >/dev/null
acked=0
for k in $(seq 0 99); do
    entries 200 $((k * 200)) | "$REPROSIGN" log append "$full/log" --key "$WORK/log.key" --batch 50 \
        >/dev/null 2>"$WORK/append.err" || break
    acked=$((acked + 200))
done
check "log append stops at a full disk, naming the file" grep -q "^reprosign: $full/log/.*: No space left on device" \
    "$WORK/append.err"
size=$("$REPROSIGN" log verify "$full/log" --vkey "$WORK/log.vkey" | sed -n 's/.*: \([0-9]*\) entries and.*/\1/p')
check "the log still verifies, with every entry acknowledged and at most one batch more ($acked, $size)" \
    test -n "$size" -a "${size:-0}" -ge "$acked" -a "${size:-0}" -lt $((acked + 200))
mount -o remount,size=8m "$full"
check "with room again, the log takes the entries that did not go in" bash -c "
    entries \$(( $acked + 200 - $size )) $size |
        '$REPROSIGN' log append '$full/log' --key '$WORK/log.key' --batch 50 >/dev/null"
check "... and verifies at $((acked + 200)) entries" bash -c "
    '$REPROSIGN' log verify '$full/log' --vkey '$WORK/log.vkey' | grep -q ': $((acked + 200)) entries and'"
rm -rf "$full/log"
mount -o remount,size=256k "$full"

# ---- the service: output on a full disk ----
repo=$WORK/repo
make_repo "$repo"
write_config disk "$repo"
python3 - "$WORK/disk.json" "$full/out" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c['output'] = sys.argv[2]; json.dump(c, open(sys.argv[1], 'w'))
PY
mkdir -p "$full/out"
svc init --state "$WORK/disk-state" --config "$WORK/disk.json" >/dev/null
fill
pass_fails "service run --once with no room for the output" "$WORK/disk-state" \
    "^reprosign: $full/out/.*: No space left on device\$"
check "... leaving nothing in the output directory" test -z "$(ls -A "$full/out")"
check "... the requests stay signed, not failed" test "$(status_of "$WORK/disk-state" "$id1")" = signed
unfill
check "with room again, the next pass publishes them" svc run --state "$WORK/disk-state" --once
check "... both" test "$(status_of "$WORK/disk-state" "$id1") $(status_of "$WORK/disk-state" "$id2")" = \
    "published published"
ls -A "$full/out" | sort >"$WORK/svc.ls"
check "... nothing hidden or partial beside them" diff "$WORK/svc.ls" <(printf '%s\n' "$id1" "$id2" | sort)

# ---- the service's state on a full disk ----
write_config st "$repo"
svc init --state "$full/st-state" --config "$WORK/st.json" >/dev/null
fill
pass_fails "service run --once with no room for its state" "$full/st-state" \
    "^reprosign: state database: $full/st-state/state.db: .*(No space left on device)\$"
check "... having published nothing" test -z "$(ls -A "$WORK/st-out")"
unfill
# 256 KiB free: the state is written, but the unsigned package (1 MB)
# cannot be staged. A full disk is a failure for now, never a refusal.
pass_fails "a request whose inputs cannot be staged fails for now, not refused (exit 3)" "$full/st-state" \
    "failed, for now: .*copying to $full/st-state/staging/.*: write failed: No space left on device (tried again later)"
check "... and is failed, to be tried again" test "$(status_of "$full/st-state" "$id1")" = failed
mount -o remount,size=8m "$full"
check "with room again, retry and the next pass publish both" bash -c "
    '$REPROSIGN' service retry --state '$full/st-state' --all-failed &&
    '$REPROSIGN' service run --state '$full/st-state' --once"
check "... and log each signature once" bash -c "
    '$REPROSIGN' log verify '$WORK/st-log' --vkey '$full/st-state/log.vkey' | grep -q ': 4 entries and'"
rm -rf "$full/st-state"
mount -o remount,size=256k "$full"

# ---- the service's upload: an incoming queue directory with no room ----
need_tool dpkg-source; need_tool dpkg-genchanges
upload_home=$WORK/upload-gnupg
mkdir -p -m 700 "$upload_home"
gpg --homedir "$upload_home" --batch --quiet --passphrase '' --quick-gen-key 'upload test <upload@example.org>' \
    ed25519 sign never 2>/dev/null
upload_fpr=$(gpg --homedir "$upload_home" --with-colons --list-keys 2>/dev/null | awk -F: '/^fpr/ { print $10; exit }')
mkdir -p "$full/incoming"
# The security update held: were both uploaded, the pass after the retry
# would publish it first and then refuse the older one as not newer
# (docs/security.md, "The upload").
write_requests "$WORK/up-requests.json" true
write_config up "$repo" ", \"upload_key\": \"$upload_fpr\", \"gnupg_home\": \"$upload_home\", \"incoming\": \"$full/incoming\""
svc init --state "$WORK/up-state" --config "$WORK/up.json" >/dev/null
fill
pass_fails "service run --once with no room in incoming" "$WORK/up-state" \
    "^reprosign: .*$full/incoming.*No space left on device"
check "... and the queue sees nothing: no file, no temporary" test -z "$(ls -A "$full/incoming")"
check "... the request whose upload failed is failed for now, saying why" bash -c "
    '$REPROSIGN' service status --state '$WORK/up-state' | grep '^$id1 ' | grep -q 'failed .*No space left on device'"
unfill
# A failed upload is tried again a minute later; 'retry' makes it due now.
check "with room again, retry and the next pass upload" bash -c "
    '$REPROSIGN' service retry --state '$WORK/up-state' --all-failed &&
    '$REPROSIGN' service run --state '$WORK/up-state' --once"
ls -A "$full/incoming" | sort >"$WORK/up.ls"
check "... once: .dsc, .tar.xz, _source.changes" test "$(grep -c '_source\.changes$' "$WORK/up.ls") \
$(grep -c '\.dsc$' "$WORK/up.ls") $(grep -c '\.tar\.xz$' "$WORK/up.ls") $(wc -l <"$WORK/up.ls")" = "1 1 1 3"
finish

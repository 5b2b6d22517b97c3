#!/bin/bash
# Operating the service: status with headers, filters and ISO 8601 JSON;
# transient failures tried again by themselves, refusals not; `service
# retry`; run --once's exit status; a failed request leaves nothing in
# staging; init makes the output directory; release says where it went.
. "$TESTS_DIR/lib.sh"
need_fixtures shim
. "$TESTS_DIR/interop/service_lib.sh"
need_tool dpkg-source; need_tool python3; need_tool promtool
mkdir -p "$WORK/metrics"

repo=$WORK/repo
make_repo "$repo"
write_config ops "$repo" ', "embargoed_suites": ["bookworm-embargoed"], "metrics_file": "'"$WORK"'/metrics/reprosign.prom"'
write_requests "$WORK/ops-requests.json" true
rmdir "$WORK/ops-out"
state=$WORK/state

check "init makes the output directory" bash -c "
    '$REPROSIGN' service init --state '$state' --config '$WORK/ops.json' && test -d '$WORK/ops-out' &&
    test \"\$(stat -c %a '$WORK/ops-out')\" = 755"
check "status on no requests says so" bash -c "[ \"\$('$REPROSIGN' service status --state '$state')\" = 'no requests' ]"

# ---- a transient failure: the archive's pool is away ----
mv "$repo/pool" "$repo/pool.away"
rc=0; svc run --state "$state" --once 2>"$WORK/run1.err" || rc=$?
check "run --once exits 1 when a request failed for now" test "$rc" = 1
check "... saying it will be tried again" grep -q 'failed for now and will be tried again' "$WORK/run1.err"
status_json() { "$REPROSIGN" service status --state "$state" --json; }
check "status --json: failure transient, attempts 1, retry_at in ISO 8601" python3 -c "
import json, re, subprocess
d = json.loads(subprocess.check_output(['$REPROSIGN', 'service', 'status', '--state', '$state', '--json']))
r = [x for x in d['requests'] if x['id'] == '$id1'][0]
assert r['status'] == 'failed' and r['failure'] == 'transient' and r['attempts'] == 1, r
iso = re.compile(r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$')
assert iso.match(r['retry_at']) and iso.match(r['arrived']) and iso.match(r['updated']), r
"
check "a failed request leaves nothing in staging" test -z "$(ls -A "$state/staging")"
"$REPROSIGN" service status --state "$state" >"$WORK/table"
check "the status table has headers" grep -qE '^REQUEST +PACKAGE +VERSION +SUITE +STATE +SINCE +REASON$' "$WORK/table"
check "... and says when a transient failure is tried again" grep -q 'failed for now; tried again at ' "$WORK/table"
check "status --status failed lists only failed requests" bash -c "
    '$REPROSIGN' service status --state '$state' --status failed | tail -n +2 | awk '{print \$5}' | sort -u | grep -qx failed"
check "status --status published: none yet" bash -c "
    [ \"\$('$REPROSIGN' service status --state '$state' --status published)\" = 'no published requests' ]"
rc=0; "$REPROSIGN" service status --state "$state" --status bogus 2>/dev/null || rc=$?
check "status --status with an unknown state is a usage error (exit 2)" test "$rc" = 2

mv "$repo/pool.away" "$repo/pool"
svc run --state "$state" --once 2>/dev/null
check "before its retry time, a pass leaves it failed" test "$(status_of "$state" "$id1")" = failed
# Its retry time comes: the next pass takes it up by itself.
python3 -c "
import sqlite3; db = sqlite3.connect('$state/state.db')
db.execute(\"UPDATE requests SET retry_at = 1 WHERE failure = 'transient'\"); db.commit()"
check "when its retry time has come, a pass signs and publishes it by itself" bash -c "
    '$REPROSIGN' service run --state '$state' --once 2>/dev/null; [ -d '$WORK/ops-out/$id1' ]"
check "... and status shows it published" test "$(status_of "$state" "$id1")" = published
prom=$WORK/metrics/reprosign.prom
check "the metrics file passes promtool check metrics" bash -c "promtool check metrics <'$prom'"
check "... readable by node_exporter (0644)" test "$(stat -c %a "$prom")" = 644
check "... counts the requests by state" grep -qx 'reprosign_requests{state="published"} 1' "$prom"
check "... and the archive face's signatures by key and sig_type (two requests, two files each)" \
    grep -qx 'reprosign_signatures_total{face="archive",key="efi",sig_type="efi"} 4' "$prom"
check "... has the signing latency histogram" grep -q '^reprosign_signing_duration_seconds_count{face="archive"} 2$' "$prom"
check "... the log's size and the last good pass" bash -c "
    grep -qx 'reprosign_log_entries 2' '$prom' && grep -qE '^reprosign_last_success_timestamp_seconds [1-9][0-9]+$' '$prom'"
check "... and how appends shared the log's checkpoints, with the syncs they cost" bash -c "
    grep -qE '^reprosign_log_appends_per_checkpoint_count [1-9]' '$prom' && grep -qE '^reprosign_log_syncs_total [1-9]' '$prom'"

# ---- a refusal: a .deb that does not match its index ----
cp "$repo/pool/main/s/$(basename "$unsigned_deb")" "$WORK/unsigned.good"
printf 'x' >>"$repo/pool/main/s/$(basename "$unsigned_deb")"
write_config refused "$repo"
write_requests "$WORK/refused-requests.json"
svc init --state "$WORK/refused-state" --config "$WORK/refused.json"
rc=0; svc run --state "$WORK/refused-state" --once 2>"$WORK/run2.err" || rc=$?
check "run --once exits 3 when a request was refused" test "$rc" = 3
check "... and status says refused, with no retry time" python3 -c "
import json, subprocess
d = json.loads(subprocess.check_output(['$REPROSIGN', 'service', 'status', '--state', '$WORK/refused-state', '--json']))
r = [x for x in d['requests'] if x['id'] == '$id1'][0]
assert r['failure'] == 'refused' and 'retry_at' not in r, r
"
cp "$WORK/unsigned.good" "$repo/pool/main/s/$(basename "$unsigned_deb")"
refuses "retry of a request that has not failed" "" \
    "$REPROSIGN" service retry --state "$state" "$id1"
check "service retry --all-failed puts both back to pending" bash -c "
    '$REPROSIGN' service retry --state '$WORK/refused-state' --all-failed | grep -q '^2 request(s) back to pending'"
check "... pending" test "$(status_of "$WORK/refused-state" "$id1")" = pending
svc run --state "$WORK/refused-state" --once 2>/dev/null
check "... and the next pass publishes them" test "$(status_of "$WORK/refused-state" "$id1")" = published

# ---- unsigned inputs only when the configuration says so ----
sed '/"archive_keyring"/d' "$WORK/ops.json" >"$WORK/unsigned.json"
refuses "a configuration without archive_keyring is refused" "$WORK/unsigned-state/state.db" \
    "$REPROSIGN" service init --state "$WORK/unsigned-state" --config "$WORK/unsigned.json"
check "... naming the setting and the way out" grep -q 'archive_keyring.*allow_unsigned_archive' "$WORK/.err"
sed 's/^{$/{ "allow_unsigned_archive": true,/' "$WORK/unsigned.json" >"$WORK/allowed.json"
svc init --state "$WORK/allowed-state" --config "$WORK/allowed.json"
svc run --state "$WORK/allowed-state" --once 2>"$WORK/allowed.err"
check "with allow_unsigned_archive, run warns at start" grep -q 'allow_unsigned_archive is set' "$WORK/allowed.err"

# ---- release says where it went ----
check "release prints what it released and where" bash -c "
    '$REPROSIGN' service release --state '$state' '$id2' | grep -qx '$id2: released and published to $WORK/ops-out/$id2'"
finish

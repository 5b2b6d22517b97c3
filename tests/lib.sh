# Shared by the script tests (tests/interop/test_*.sh). Source it first.
# Environment (set by CTest): REPROSIGN, TESTS_DIR, FIXTURES.
set -uo pipefail

: "${REPROSIGN:?run through ctest, or set REPROSIGN to build/reprosign}"
: "${TESTS_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}"
: "${FIXTURES:=$TESTS_DIR/../build/fixtures}"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PASSED=0
FAILED=0

pass() { PASSED=$((PASSED + 1)); echo "ok - $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL - $*"; }

# check "description" command...: passes when the command succeeds.
check() {
    local what=$1; shift
    if "$@" >"$WORK/.out" 2>&1; then pass "$what"; else fail "$what"; sed 's/^/    /' "$WORK/.out"; fi
}

# refuses "description" OUTPUT-THAT-MUST-NOT-EXIST command...: the command
# must exit 1 with exactly one line on stderr, starting "reprosign: ",
# and leave no file at OUTPUT (pass "" when there is none).
refuses() {
    local what=$1 output=$2; shift 2
    local rc=0
    "$@" >"$WORK/.out" 2>"$WORK/.err" || rc=$?
    if [ "$rc" -ne 1 ]; then
        fail "$what: exit status $rc, expected 1"; sed 's/^/    /' "$WORK/.err"; return
    fi
    if [ "$(wc -l <"$WORK/.err")" -ne 1 ] || ! grep -q '^reprosign: ' "$WORK/.err"; then
        fail "$what: error is not one 'reprosign: ' line"; sed 's/^/    /' "$WORK/.err"; return
    fi
    if [ -n "$output" ] && [ -e "$output" ]; then
        fail "$what: left $output behind"; return
    fi
    if compgen -G "$(dirname "${output:-$WORK/x}")/.*.??????" >/dev/null; then
        fail "$what: left a temporary file behind"; return
    fi
    pass "$what ($(cat "$WORK/.err"))"
}

same_bytes() { cmp -s "$1" "$2"; }

# entries N FIRST: N transparency-log entries of about 100 bytes, as JSON
# lines for `log append` (the log tests, test_full_disk).
entries() {  # exported for bash -c
    python3 -c "
import sys
for i in range($2, $2 + $1):
    print('{\"format\":\"pe\",\"i\":%d,\"signed_digest\":\"sha256:%064x\"}' % (i, i * 7919))"
}
export -f entries

# copy_source DIR: the project's tracked and new files (no build
# directories or fixtures) into DIR, as a package build takes them.
copy_source() {
    mkdir -p "$1" && (cd "$TESTS_DIR/.." && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$1")
}

# Test keys: RSA-2048, self-signed, with a subjectKeyIdentifier.
make_key() {  # make_key NAME [SUBJECT]
    local name=$1 subject=${2:-/CN=reprosign test $1}
    openssl req -new -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -subj "$subject" \
        -addext "subjectKeyIdentifier=hash" \
        -keyout "$WORK/$name.key" -out "$WORK/$name.crt" 2>/dev/null
    openssl x509 -in "$WORK/$name.crt" -outform DER -out "$WORK/$name.der"
}

# Fixtures are fetched on first use; a machine without the network skips.
need_fixtures() {  # need_fixtures shim|kernel
    if ! bash "$TESTS_DIR/fetch-fixtures.sh" "$FIXTURES" "$1" >"$WORK/.fetch" 2>&1; then
        cat "$WORK/.fetch"; skip "cannot fetch $1 fixtures"
    fi
}

need_tool() {
    command -v "$1" >/dev/null 2>&1 || [ -x "$1" ] || skip "$1 is not installed"
}

# A test that cannot run on this machine skips (exit 77). scripts/test.sh
# installs every tool and sets REPROSIGN_REQUIRE_ALL=1: there a skip would
# hide a missing dependency behind a passing run, so it fails instead.
skip() {  # skip REASON
    if [ "${REPROSIGN_REQUIRE_ALL:-0}" = 1 ]; then
        echo "FAIL - cannot run: $* (REPROSIGN_REQUIRE_ALL=1 requires every test)"; exit 1
    fi
    echo "SKIP: $*"; exit 77
}

# leave_out REASON: the same for a part of a test, after which it goes on.
leave_out() {
    if [ "${REPROSIGN_REQUIRE_ALL:-0}" = 1 ]; then
        fail "cannot run: $* (REPROSIGN_REQUIRE_ALL=1 requires every test)"
    else
        echo "note: $*: left out"
    fi
}

# Whether $REPROSIGN was built with ASan or UBSan, whose shadow memory a
# peak RSS would measure. Not a pipe into grep -q: under pipefail, nm
# killed by SIGPIPE once grep has its match would make it answer no.
sanitized_build() {
    case $(nm -D "$REPROSIGN" 2>/dev/null) in *__asan_init* | *__ubsan_handle*) return 0 ;; esac
    return 1
}

# peak_kib FILE command...: runs the command, writes its peak RSS in KiB.
peak_kib() {
    local out=$1; shift
    python3 -c 'import resource, subprocess, sys
rc = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL).returncode
open(sys.argv[1], "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$out" "$@"
}

# A signing service that answers only its socket ($sock, $WORK/sign.sock)
# to this uid, with one key for PURPOSE: writes $WORK/config.json and
# initialises its state in $WORK/state.
socket_service() {  # socket_service PURPOSE KEY CERT
    sock=$WORK/sign.sock
    cat >"$WORK/config.json" <<JSON
{
  "archive": "$WORK/no-archive",
  "requests": "$WORK/no-requests.json",
  "allow_unsigned_archive": true,
  "keys": {"$1": {"key": "$2", "cert": "$3"}},
  "output": "$WORK/out",
  "log": "$WORK/log",
  "socket": {"path": "$sock", "allow_uids": [$(id -u)], "group": 65534},
  "poll_interval": 3600
}
JSON
    mkdir -p "$WORK/out"
    "$REPROSIGN" service init --state "$WORK/state" --config "$WORK/config.json"
}

finish() {
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
}

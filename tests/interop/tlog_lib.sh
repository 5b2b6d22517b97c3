# Shared by the transparency-log tests: the Go checker built offline from
# Debian's golang-go and golang-golang-x-mod-dev, in GOPATH mode.
need_tool go
[ -d /usr/share/gocode/src/golang.org/x/mod/sumdb/tlog ] || skip "golang-golang-x-mod-dev is not installed"
mkdir -p "$WORK/gopath"
GO111MODULE=off GOPATH="$WORK/gopath:/usr/share/gocode" GOCACHE="$WORK/gocache" GOFLAGS= \
    go build -o "$WORK/tlogcheck" "$TESTS_DIR/tlogcheck/main.go" || { echo "FAIL - cannot build tlogcheck"; exit 1; }
tlogcheck() { "$WORK/tlogcheck" "$@"; }

# entries N FIRST: N entries of about 100 bytes, as JSON lines.
entries() {  # exported for bash -c
    python3 -c "
import sys
for i in range($2, $2 + $1):
    print('{\"format\":\"pe\",\"i\":%d,\"signed_digest\":\"sha256:%064x\"}' % (i, i * 7919))"
}
export -f entries

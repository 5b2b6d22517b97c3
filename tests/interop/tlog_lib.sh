# Shared by the transparency-log tests: the Go checker built offline from
# Debian's golang-go and golang-golang-x-mod-dev, in GOPATH mode.
need_tool go
[ -d /usr/share/gocode/src/golang.org/x/mod/sumdb/tlog ] || skip "golang-golang-x-mod-dev is not installed"
mkdir -p "$WORK/gopath"
GO111MODULE=off GOPATH="$WORK/gopath:/usr/share/gocode" GOCACHE="$WORK/gocache" GOFLAGS= \
    go build -o "$WORK/tlogcheck" "$TESTS_DIR/tlogcheck/main.go" || { echo "FAIL - cannot build tlogcheck"; exit 1; }
tlogcheck() { "$WORK/tlogcheck" "$@"; }


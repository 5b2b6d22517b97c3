#!/bin/bash
# tests/tools/newest-deb.sh, which every fixture-driven test and bench uses
# to pick "the newest .deb": dpkg's version order, not sort -V's, and only
# the architectures asked for. Names only; no fixtures needed.
. "$TESTS_DIR/lib.sh"
need_tool dpkg
newest() { bash "$TESTS_DIR/tools/newest-deb.sh" "$WORK/d" "$@"; }
mkdir "$WORK/d"
for f in foo_1.0_amd64.deb foo_1.0~rc1_amd64.deb foo_1.0+deb12u1_amd64.deb foo_0.9_all.deb \
    foo_2.0_i386.deb foo-bar_9_amd64.deb bar_1%3a0.9_amd64.deb bar_2.0_amd64.deb; do
    : >"$WORK/d/$f"
done
check "the newest of one architecture, '+deb12u1' after the release and '~rc1' before it" \
    test "$(newest foo amd64)" = "$WORK/d/foo_1.0+deb12u1_amd64.deb"
check "'all' among the architectures asked for" test "$(newest foo all)" = "$WORK/d/foo_0.9_all.deb"
check "any architecture when none is named" test "$(newest foo)" = "$WORK/d/foo_2.0_i386.deb"
check "an epoch outranks a higher upstream version (sort -V picks 2.0)" \
    test "$(newest bar amd64)" = "$WORK/d/bar_1%3a0.9_amd64.deb"
check "a package whose name another's begins with is not taken for it" \
    test "$(newest foo-bar)" = "$WORK/d/foo-bar_9_amd64.deb"
check "no .deb of that architecture: exit 1, nothing printed" \
    bash -c "! out=\$(bash '$TESTS_DIR/tools/newest-deb.sh' '$WORK/d' foo arm64) && [ -z \"\$out\" ]"
check "no such package: exit 1" bash -c "! bash '$TESTS_DIR/tools/newest-deb.sh' '$WORK/d' baz >/dev/null"
check "usage error: exit 2" bash -c "bash '$TESTS_DIR/tools/newest-deb.sh' '$WORK/d' 2>/dev/null; [ \$? = 2 ]"
finish

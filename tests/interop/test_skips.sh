#!/bin/bash
# The tests' own skip rules (tests/lib.sh, tests/unit/harness.c): a test
# that cannot run here skips, except under REPROSIGN_REQUIRE_ALL=1
# (scripts/test.sh), where it fails, so CI cannot pass with tests unrun.
. "$TESTS_DIR/lib.sh"

status() {  # status REQUIRE_ALL SNIPPET: the exit status of a test doing SNIPPET
    REPROSIGN_REQUIRE_ALL=$1 bash -c ". '$TESTS_DIR/lib.sh'; $2; finish" >"$WORK/.snippet" 2>&1
    echo $?
}
check "a missing tool skips" test "$(status 0 'need_tool reprosign-no-such-tool')" = 77
check "... and fails when every test is required" test "$(status 1 'need_tool reprosign-no-such-tool')" = 1
check "... saying which tool" grep -q "reprosign-no-such-tool is not installed" "$WORK/.snippet"
check "a present tool does neither" test "$(status 1 'need_tool sh')" = 0
check "a part left out is a note" test "$(status 0 'leave_out "no widget: the widget cases"')" = 0
check "... and a failure when every test is required" test "$(status 1 'leave_out "no widget: the widget cases"')" = 1
check "fixtures that cannot be fetched fail when every test is required" \
    test "$(status 1 'FIXTURES=/dev/null/none need_fixtures no-such-set')" = 1
finish

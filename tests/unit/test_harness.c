/* The unit tests' skip rule: 77 (skipped) on a machine that lacks what a
 * test needs, but a failure under REPROSIGN_REQUIRE_ALL=1 (scripts/test.sh). */
#include <stdlib.h>

#include "harness.h"

int main(void)
{
    unsetenv("REPROSIGN_REQUIRE_ALL");
    CHECK(harness_skip("test_harness", "no widget (expected)") == 77);
    setenv("REPROSIGN_REQUIRE_ALL", "0", 1);
    CHECK(harness_skip("test_harness", "no widget (expected)") == 77);
    setenv("REPROSIGN_REQUIRE_ALL", "1", 1);
    CHECK(harness_skip("test_harness", "no widget (expected)") == 1);
    return harness_finish("test_harness");
}

#include "harness.h"

int harness_failures;

int harness_finish(const char *name)
{
    if (harness_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, harness_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

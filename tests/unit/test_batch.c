/* rs_batch_run reports the lowest failing item, not whichever thread
 * happened to fail first, so one bad input gives one error every time. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "pipeline/batch.h"

typedef struct run {
    size_t slow_bad, fast_bad;
    atomic_size_t ran_below;     /* items below slow_bad that ran */
} run;

static int item(void *ctx, size_t i, rs_error *err)
{
    run *r = ctx;

    if (i < r->slow_bad)
        atomic_fetch_add(&r->ran_below, 1);
    if (i == r->slow_bad) {
        /* Long enough for the other threads to reach fast_bad and fail. */
        struct timespec ts = { 0, 50 * 1000 * 1000 };

        nanosleep(&ts, NULL);
        return rs_fail(err, "item %zu is bad", i);
    }
    if (i == r->fast_bad)
        return rs_fail(err, "item %zu is bad", i);
    return 0;
}

int main(void)
{
    for (int round = 0; round < 5; round++) {
        run r = { .slow_bad = 300, .fast_bad = 700 };
        rs_error err = { 0 };

        atomic_init(&r.ran_below, 0);
        CHECK(rs_batch_run(1000, 4, item, &r, &err) < 0);
        CHECK(strcmp(err.msg, "item 300 is bad") == 0);
        CHECK(atomic_load(&r.ran_below) == 300);
        if (strcmp(err.msg, "item 300 is bad") != 0)
            fprintf(stderr, "round %d reported: %s\n", round, err.msg);
    }
    {
        run r = { .slow_bad = 2000, .fast_bad = 2000 };
        rs_error err = { 0 };

        atomic_init(&r.ran_below, 0);
        CHECK(rs_batch_run(1000, 4, item, &r, &err) == 0);
        CHECK(atomic_load(&r.ran_below) == 1000);
    }
    return harness_finish("test_batch");
}

/* Running one function over many items on a pool of threads, with
 * cancellation by signal. (Progress: base/progress.h.) */
#ifndef RS_BATCH_H
#define RS_BATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

/* Calls fn(ctx, i, err) for i in [0, n) on `jobs` threads (0: one per
 * core). Stops handing out items after the first failure, or once a
 * SIGINT/SIGTERM arrives, and returns the error of the lowest item that
 * failed: the same error on every run, however the threads interleave. */
typedef int (*rs_batch_fn)(void *ctx, size_t i, rs_error *err);
int rs_batch_run(size_t n, unsigned jobs, rs_batch_fn fn, void *ctx, rs_error *err);

/* SIGINT/SIGTERM set a flag instead of killing the process, so a batch can
 * stop and clean up; rs_cancelled() reports it, rs_reraise() then dies by
 * the same signal. */
void rs_cancel_on_signals(void);
bool rs_cancelled(void);
void rs_reraise(void);

unsigned rs_default_jobs(void);

#endif

#include "pipeline/batch.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t cancel_signal;

static void on_signal(int sig)
{
    cancel_signal = sig;
}

void rs_cancel_on_signals(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

bool rs_cancelled(void)
{
    return cancel_signal != 0;
}

void rs_reraise(void)
{
    int sig = cancel_signal;

    if (!sig)
        return;
    signal(sig, SIG_DFL);
    raise(sig);
}

unsigned rs_default_jobs(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    return n > 0 ? (unsigned)n : 1;
}

typedef struct pool {
    size_t n;
    rs_batch_fn fn;
    void *ctx;
    atomic_size_t next;
    atomic_bool failed;
    pthread_mutex_t lock;
    size_t first_index;
    rs_error first;
} pool;

static void *worker(void *arg)
{
    pool *p = arg;
    rs_error err;
    size_t i;

    while (!atomic_load(&p->failed) && !rs_cancelled() && (i = atomic_fetch_add(&p->next, 1)) < p->n) {
        if (p->fn(p->ctx, i, &err) < 0) {
            /* Items are handed out in order and every item handed out
             * runs to its end, so the lowest failing index is the same
             * on every run, whichever thread fails first. */
            pthread_mutex_lock(&p->lock);
            if (!atomic_exchange(&p->failed, true) || i < p->first_index) {
                p->first_index = i;
                p->first = err;
            }
            pthread_mutex_unlock(&p->lock);
        }
    }
    return NULL;
}

int rs_batch_run(size_t n, unsigned jobs, rs_batch_fn fn, void *ctx, rs_error *err)
{
    pool p = { .n = n, .fn = fn, .ctx = ctx };
    pthread_t *threads;
    unsigned started = 0;

    if (jobs == 0)
        jobs = rs_default_jobs();
    if (jobs > n)
        jobs = n ? (unsigned)n : 1;
    atomic_init(&p.next, 0);
    atomic_init(&p.failed, false);
    pthread_mutex_init(&p.lock, NULL);
    threads = calloc(jobs, sizeof(*threads));
    if (!threads)
        return rs_fail(err, "out of memory");
    for (unsigned i = 1; i < jobs; i++)
        if (pthread_create(&threads[started], NULL, worker, &p) == 0)
            started++;
    worker(&p);   /* the calling thread works too */
    for (unsigned i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    free(threads);
    pthread_mutex_destroy(&p.lock);
    if (atomic_load(&p.failed)) {
        *err = p.first;
        return -1;
    }
    if (rs_cancelled())
        return rs_fail(err, "interrupted");
    return 0;
}

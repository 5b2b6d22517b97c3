/* signatures.tar.gz written on its own thread while the signatures are
 * made (pipeline/tarball.h, rs_tarball_feed). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "pipeline/tarball.h"

/* A wakeup costs more than writing an entry: the writer waits for a run
 * of entries, not for each one. */
#define FEED_RUN 32

struct rs_tarball_feed {
    rs_tarball *t;
    char *output;
    time_t mtime;
    rs_tarball_entry entry;
    void *ctx;
    size_t n;
    bool *ready;
    size_t done;          /* files 0..done-1 are all ready */
    size_t wake_at;       /* the writer sleeps until done reaches this */
    bool stop;
    bool failed;          /* err is set; both under the lock */
    bool running;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    rs_error err;
};

/* How many files, from the first, are ready once file k is; 0 if stopped. */
static size_t feed_wait(rs_tarball_feed *f, size_t k)
{
    size_t avail;

    pthread_mutex_lock(&f->lock);
    f->wake_at = k + FEED_RUN < f->n ? k + FEED_RUN : f->n;
    while (f->done <= k && !f->stop)
        pthread_cond_wait(&f->cond, &f->lock);
    avail = f->stop ? 0 : f->done;
    pthread_mutex_unlock(&f->lock);
    return avail;
}

/* The tarball's own failures name it; entry's name what failed. */
static int feed_run(rs_tarball_feed *f, rs_error *err)
{
    size_t k = 0, avail;

    /* Opened here, so loading libarchive overlaps with the caller's work. */
    if (rs_tarball_open(&f->t, f->output, f->mtime, err) < 0)
        return rs_error_prefix(err, "%s", f->output);
    while (k < f->n && (avail = feed_wait(f, k)) > 0)
        for (; k < avail; k++) {
            const char *path;
            const void *data;
            size_t len;

            if (f->entry(f->ctx, k, &path, &data, &len, err) < 0)
                return -1;
            if (rs_tarball_add_file(f->t, path, data, len, err) < 0)
                return rs_error_prefix(err, "%s", f->output);
        }
    return 0;
}

static void *feed_main(void *arg)
{
    rs_tarball_feed *f = arg;
    rs_names_locale n = rs_tarball_utf8_names_begin();
    rs_error err;

    if (feed_run(f, &err) < 0) {
        pthread_mutex_lock(&f->lock);
        f->err = err;
        f->failed = true;
        pthread_mutex_unlock(&f->lock);
    }
    rs_tarball_utf8_names_end(n);
    return NULL;
}

void rs_tarball_feed_ready(rs_tarball_feed *f, size_t k)
{
    pthread_mutex_lock(&f->lock);
    f->ready[k] = true;
    while (f->done < f->n && f->ready[f->done])
        f->done++;
    if (f->done >= f->wake_at)
        pthread_cond_signal(&f->cond);
    pthread_mutex_unlock(&f->lock);
}

int rs_tarball_feed_check(rs_tarball_feed *f, rs_error *err)
{
    int rc = 0;

    pthread_mutex_lock(&f->lock);
    if (f->failed) {
        *err = f->err;
        rc = -1;
    }
    pthread_mutex_unlock(&f->lock);
    return rc;
}

/* Waits for the writer, which ends once every entry is written, or
 * sooner when f->stop is set. */
static void feed_join(rs_tarball_feed *f)
{
    if (!f->running)
        return;
    pthread_mutex_lock(&f->lock);
    pthread_cond_signal(&f->cond);
    pthread_mutex_unlock(&f->lock);
    pthread_join(f->thread, NULL);
    f->running = false;
}

/* Tells the writer to end where it is, and waits for it. */
static void feed_stop(rs_tarball_feed *f)
{
    pthread_mutex_lock(&f->lock);
    f->stop = true;
    pthread_mutex_unlock(&f->lock);
    feed_join(f);
}

void rs_tarball_feed_free(rs_tarball_feed *f)
{
    if (!f)
        return;
    feed_stop(f);
    rs_tarball_free(f->t);
    pthread_cond_destroy(&f->cond);
    pthread_mutex_destroy(&f->lock);
    free(f->output);
    free(f->ready);
    free(f);
}

DEFINE_POINTER_CLEANUP(feed_freep, rs_tarball_feed, rs_tarball_feed_free)

int rs_tarball_feed_start(rs_tarball_feed **out, const char *output, time_t mtime, size_t n, rs_tarball_entry entry,
                          void *ctx, rs_error *err)
{
    _cleanup_(feed_freep) rs_tarball_feed *f = calloc(1, sizeof(*f));
    int e;

    if (!f)
        return rs_fail(err, "out of memory");
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->cond, NULL);
    f->mtime = mtime;
    f->entry = entry;
    f->ctx = ctx;
    f->n = n;
    if (!(f->ready = calloc(n ? n : 1, sizeof(bool))) || !(f->output = strdup(output)))
        return rs_fail(err, "out of memory");
    if ((e = pthread_create(&f->thread, NULL, feed_main, f)) != 0)
        return rs_fail(err, "cannot start a thread: %s", strerror(e));
    f->running = true;
    *out = TAKE_PTR(f);
    return 0;
}

int rs_tarball_feed_finish(rs_tarball_feed *f, rs_error *err)
{
    feed_join(f);
    if (f->failed) {
        *err = f->err;
        return -1;
    }
    return rs_tarball_commit(f->t, err) < 0 ? rs_error_prefix(err, "%s", f->output) : 0;
}

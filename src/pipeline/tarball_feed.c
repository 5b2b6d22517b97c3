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
/* Marks of files ready but not yet done, by place modulo this: a file
 * given room is under RS_TARBALL_FEED_AHEAD past the first not done, so
 * twice that never wraps onto a mark still wanted. */
#define FEED_READY (2 * RS_TARBALL_FEED_AHEAD)

struct rs_tarball_feed {
    rs_tarball *t;
    char *output;
    time_t mtime;
    rs_tarball_entry entry;
    void *ctx;
    size_t n;
    bool ready[FEED_READY];   /* file k's mark, at k modulo FEED_READY, once ready and until done */
    size_t done;          /* files 0..done-1 are all ready */
    size_t wake_at;       /* the writer sleeps until done reaches this */
    size_t written;       /* files 0..written-1 are in the tarball */
    size_t abandoned_at;  /* the first file that will never be ready, or n */
    unsigned room_waiters;
    bool stop;
    bool failed;          /* err is set; both under the lock */
    bool running;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_cond_t room;  /* signalled as files are written */
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

static void feed_written(rs_tarball_feed *f, size_t written)
{
    pthread_mutex_lock(&f->lock);
    f->written = written;
    if (f->room_waiters)
        pthread_cond_broadcast(&f->room);
    pthread_mutex_unlock(&f->lock);
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
            feed_written(f, k + 1);
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
        pthread_cond_broadcast(&f->room);
        pthread_mutex_unlock(&f->lock);
    }
    rs_tarball_utf8_names_end(n);
    return NULL;
}

void rs_tarball_feed_ready(rs_tarball_feed *f, size_t k)
{
    pthread_mutex_lock(&f->lock);
    f->ready[k % FEED_READY] = true;
    while (f->done < f->n && f->ready[f->done % FEED_READY])
        f->ready[f->done++ % FEED_READY] = false;
    if (f->done >= f->wake_at)
        pthread_cond_signal(&f->cond);
    pthread_mutex_unlock(&f->lock);
}

/* No file at or after the first one abandoned gets written: waiting for
 * room there would never end. Those before it still get their room. */
int rs_tarball_feed_room(rs_tarball_feed *f, size_t k, rs_error *err)
{
    int rc = 0;

    pthread_mutex_lock(&f->lock);
    while (!f->failed && !f->stop && k < f->abandoned_at && k >= f->written + RS_TARBALL_FEED_AHEAD) {
        f->room_waiters++;
        pthread_cond_wait(&f->room, &f->lock);
        f->room_waiters--;
    }
    if (f->failed) {
        *err = f->err;
        rc = -1;
    } else if (f->stop || k > f->abandoned_at) {
        rc = rs_fail(err, "not made: an earlier file failed");
    }
    pthread_mutex_unlock(&f->lock);
    return rc;
}

void rs_tarball_feed_abandon(rs_tarball_feed *f, size_t k)
{
    pthread_mutex_lock(&f->lock);
    if (k < f->abandoned_at)
        f->abandoned_at = k;
    pthread_cond_broadcast(&f->room);
    pthread_mutex_unlock(&f->lock);
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
    pthread_cond_broadcast(&f->room);
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
    pthread_cond_destroy(&f->room);
    pthread_mutex_destroy(&f->lock);
    free(f->output);
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
    pthread_cond_init(&f->room, NULL);
    f->abandoned_at = n;
    f->mtime = mtime;
    f->entry = entry;
    f->ctx = ctx;
    f->n = n;
    if (!(f->output = strdup(output)))
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

/* Syncing a set of paths together (sync_set.h). */
#include "base/sync_set.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"

/* Syncs in flight at once. Each is a few small writes the caller would
 * otherwise wait for one after another; side by side the disk takes them
 * together (and a journalling file system commits them as one). A commit
 * of the log names a handful of paths, a large batch a few hundred. */
#define SYNC_THREADS 8

static int add(rs_sync_set *s, const char *path, rs_sync_kind kind, rs_error *err)
{
    rs_sync_item *grown;

    for (size_t i = 0; i < s->n; i++)
        if (s->items[i].kind == kind && !strcmp(s->items[i].path, path))
            return 0;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;

        if (!(grown = realloc(s->items, cap * sizeof(*grown))))
            return rs_fail(err, "out of memory");
        s->items = grown;
        s->cap = cap;
    }
    if (!(s->items[s->n].path = strdup(path)))
        return rs_fail(err, "out of memory");
    s->items[s->n++].kind = kind;
    return 0;
}

int rs_sync_set_file(rs_sync_set *s, const char *path, rs_error *err)
{
    return add(s, path, RS_SYNC_FILE, err);
}

int rs_sync_set_dir(rs_sync_set *s, const char *path, rs_error *err)
{
    return add(s, path, RS_SYNC_DIR, err);
}

int rs_sync_set_remove(rs_sync_set *s, const char *path, bool and_dir, rs_error *err)
{
    return add(s, path, and_dir ? RS_SYNC_REMOVE_AND_DIR : RS_SYNC_REMOVE, err);
}

int rs_sync_set_new_file(rs_sync_set *s, const char *path, size_t made, rs_error *err)
{
    _cleanup_free_ char *dir = malloc(strlen(path) + 2);   /* room for "." */
    char *slash;
    bool was_made;

    if (!dir)
        return rs_fail(err, "out of memory");
    strcpy(dir, path);
    if (add(s, path, RS_SYNC_FILE, err) < 0)
        return -1;
    /* Up from the file's directory: each directory made for it is a new
     * entry in the one above, up to the one that existed before. */
    do {
        if (!(slash = strrchr(dir, '/')))
            strcpy(dir, ".");
        else
            slash[slash == dir] = '\0';   /* "/" stays itself */
        was_made = made && slash && slash != dir && strlen(dir) >= made;
        if (add(s, dir, RS_SYNC_DIR, err) < 0)
            return -1;
    } while (was_made);
    return 0;
}

size_t rs_sync_set_syncs(const rs_sync_set *s)
{
    size_t n = 0;

    for (size_t i = 0; i < s->n; i++)
        n += s->items[i].kind == RS_SYNC_FILE || s->items[i].kind == RS_SYNC_DIR;
    return n;
}

typedef struct run {
    rs_sync_set *s;
    size_t next;                 /* the next item to take */
    pthread_mutex_t mu;
    int rc;
    rs_error err;                /* the first failure */
} run;

static void remove_one(const rs_sync_item *it)
{
    char *slash;

    unlink(it->path);
    if (it->kind == RS_SYNC_REMOVE_AND_DIR && (slash = strrchr(it->path, '/')) && slash != it->path) {
        *slash = '\0';
        rmdir(it->path);
        *slash = '/';
    }
}

static int sync_one(const rs_sync_item *it, rs_error *err)
{
    bool dir = it->kind == RS_SYNC_DIR;
    _cleanup_close_ int fd = -1;

    if (it->kind == RS_SYNC_REMOVE || it->kind == RS_SYNC_REMOVE_AND_DIR) {
        remove_one(it);
        return 0;
    }
    fd = open(it->path, O_RDONLY | O_CLOEXEC | (dir ? O_DIRECTORY : 0));
    if (fd < 0 || (dir ? fsync(fd) : fdatasync(fd)) < 0)
        return rs_fail_sys(err, errno, "%s: cannot sync: %s", it->path, strerror(errno));
    return 0;
}

static void work(run *r)
{
    size_t i;
    rs_error err;

    while ((i = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED)) < r->s->n) {
        if (sync_one(&r->s->items[i], &err) == 0)
            continue;
        pthread_mutex_lock(&r->mu);
        if (r->rc == 0) {
            r->rc = -1;
            r->err = err;
        }
        pthread_mutex_unlock(&r->mu);
    }
}

/* The helpers: threads started once and kept, since starting seven costs
 * more CPU than the syncs they make (1.5 ms on a busy two-core machine).
 * They help one run at a time; a run that finds them busy (another log,
 * another thread) does its own work alone. Detached, they end with the
 * process. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t wake, idle;
    run *job;                    /* the run they help with, or NULL */
    unsigned busy;               /* helpers inside job */
} pool = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0 };
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static bool job_open(void)
{
    return pool.job && __atomic_load_n(&pool.job->next, __ATOMIC_RELAXED) < pool.job->s->n;
}

static void *helper(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&pool.mu);
    for (;;) {
        run *r;

        while (!job_open())
            pthread_cond_wait(&pool.wake, &pool.mu);
        r = pool.job;
        pool.busy++;
        pthread_mutex_unlock(&pool.mu);
        work(r);
        pthread_mutex_lock(&pool.mu);
        if (--pool.busy == 0)
            pthread_cond_broadcast(&pool.idle);
    }
    return NULL;
}

static void start_pool(void)
{
    pthread_attr_t attr;
    pthread_t t;

    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    /* One that cannot start leaves its share to the others. */
    for (int i = 0; i + 1 < SYNC_THREADS; i++)
        pthread_create(&t, &attr, helper, NULL);
    pthread_attr_destroy(&attr);
}

int rs_sync_set_run(rs_sync_set *s, rs_error *err)
{
    run r = { .s = s };
    bool helped = false;

    pthread_mutex_init(&r.mu, NULL);
    if (s->n > 1) {
        pthread_once(&pool_once, start_pool);
        pthread_mutex_lock(&pool.mu);
        if (!pool.job) {
            pool.job = &r;
            helped = true;
            pthread_cond_broadcast(&pool.wake);
        }
        pthread_mutex_unlock(&pool.mu);
    }
    work(&r);   /* the caller works too */
    if (helped) {
        pthread_mutex_lock(&pool.mu);
        pool.job = NULL;
        while (pool.busy)
            pthread_cond_wait(&pool.idle, &pool.mu);
        pthread_mutex_unlock(&pool.mu);
    }
    pthread_mutex_destroy(&r.mu);
    rs_sync_set_clear(s);
    if (r.rc < 0)
        *err = r.err;
    return r.rc;
}

void rs_sync_set_clear(rs_sync_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->items[i].path);
    s->n = 0;
}

void rs_sync_set_free(rs_sync_set *s)
{
    rs_sync_set_clear(s);
    free(s->items);
    s->items = NULL;
    s->cap = 0;
}

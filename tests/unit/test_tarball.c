/* A tarball built from memory, file by file in rs_tarball_path_cmp order
 * (directly, or on the feed's own thread with files becoming ready in any
 * order), has the bytes rs_tarball_write gives for the same tree on disk. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bytes.h"
#include "base/file.h"
#include "harness.h"
#include "pipeline/tarball.h"

/* Names where '/' must sort before '-', '.', ' ' and '!', a name that is
 * a prefix of its neighbours, long names (pax headers) and empty data. */
static const char *const files[] = {
    "p/a-b.sig", "p/a/b.sig", "p/a.b.sig", "p/a/b/c.sig", "p/a/b-c.sig", "p/a/b.c.sig", "p/a.sig", "p/a!b.sig",
    "p/a b.sig", "p/a0.sig", "p/A.sig", "p/Z/z.sig", "p-q/x.sig", "p.q/x.sig", "p+q/x.sig", "pq/x.sig",
    "p/deep/1/2/3/4/5/6/7/8/9/m.sig", "p/empty.sig",
    "p/long/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx/yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy.sig",
};
#define N_FILES (sizeof(files) / sizeof(files[0]))

static char data[N_FILES][700];
static size_t lens[N_FILES];
static const char *sorted[N_FILES];

static int cmp_path(const void *a, const void *b)
{
    return rs_tarball_path_cmp(*(const char *const *)a, *(const char *const *)b);
}

static int data_of(const char *path)
{
    for (size_t i = 0; i < N_FILES; i++)
        if (!strcmp(files[i], path))
            return (int)i;
    return -1;
}

/* ctx, when given, is the entry that fails. */
static int entry(void *ctx, size_t k, const char **path, const void **d, size_t *len, rs_error *err)
{
    int i = data_of(sorted[k]);

    if (ctx && k == *(const size_t *)ctx)
        return rs_fail(err, "%s: cannot write it elsewhere", sorted[k]);
    *path = sorted[k];
    *d = data[i];
    *len = lens[i];
    return 0;
}

/* An entry that fails stops the writer: the check says so once the writer
 * is there, finish gives the entry's own error, and nothing is left. */
static void failing_entry_stops(const char *dir)
{
    char out[256];
    size_t failing = 2;
    rs_tarball_feed *feed;
    rs_error err;
    int tries = 0;

    snprintf(out, sizeof(out), "%s/failed.tar.gz", dir);
    CHECK(rs_tarball_feed_start(&feed, out, 0, N_FILES, entry, &failing, &err) == 0);
    CHECK(rs_tarball_feed_room(feed, 0, &err) == 0);
    for (size_t k = 0; k < N_FILES; k++)
        rs_tarball_feed_ready(feed, k);
    while (rs_tarball_feed_room(feed, 0, &err) == 0 && tries++ < 5000)
        usleep(1000);
    CHECK(strstr(err.msg, sorted[failing]) && strstr(err.msg, "cannot write it elsewhere"));
    CHECK(rs_tarball_feed_finish(feed, &err) < 0);
    CHECK(strstr(err.msg, "cannot write it elsewhere") && !strstr(err.msg, out));
    rs_tarball_feed_free(feed);
    CHECK(access(out, F_OK) != 0);
}

/* Files named f00000, f00001, ...: the writer stops at file 0 until the
 * gate opens. */
#define N_NUMBERED 3000
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static bool gate_open;
static char numbered[N_NUMBERED][8];

static int numbered_entry(void *ctx, size_t k, const char **path, const void **d, size_t *len, rs_error *err)
{
    (void)ctx;
    (void)err;
    pthread_mutex_lock(&gate_lock);
    while (!gate_open)
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
    snprintf(numbered[k], sizeof(numbered[k]), "f%05zu", k);
    *path = numbered[k];
    *d = "x";
    *len = 1;
    return 0;
}

typedef struct room_wait {
    rs_tarball_feed *feed;
    size_t k;
    int rc;
    bool returned;
} room_wait;

static void *wait_for_room(void *arg)
{
    room_wait *w = arg;
    rs_error err;

    w->rc = rs_tarball_feed_room(w->feed, w->k, &err);
    __atomic_store_n(&w->returned, true, __ATOMIC_SEQ_CST);
    return NULL;
}

/* Files are made at most 1,024 ahead of the writer; after a file that
 * failed, none is made, and none waits for room it would never get. The
 * writer wakes for a run of files, not for each: like a signer, the test
 * readies every file it was given room for before it waits for more. */
static void room_bounds_files_ahead(const char *dir)
{
    char out[256];
    rs_tarball_feed *feed;
    room_wait w;
    pthread_t thread;
    rs_error err;

    snprintf(out, sizeof(out), "%s/ahead.tar.gz", dir);
    CHECK(rs_tarball_feed_start(&feed, out, 0, N_NUMBERED, numbered_entry, NULL, &err) == 0);
    CHECK(rs_tarball_feed_room(feed, 1023, &err) == 0);
    for (size_t k = 0; k < 1024; k++)
        rs_tarball_feed_ready(feed, k);   /* the writer now waits at the gate, nothing written */
    w = (room_wait){ .feed = feed, .k = 1024 };
    pthread_create(&thread, NULL, wait_for_room, &w);
    usleep(50 * 1000);
    CHECK(!__atomic_load_n(&w.returned, __ATOMIC_SEQ_CST));   /* 1,024 ahead of file 0: it waits */
    pthread_mutex_lock(&gate_lock);
    gate_open = true;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
    pthread_join(thread, NULL);
    CHECK(w.returned && w.rc == 0);   /* file 0 written: room for 1,024 */

    for (size_t k = 1024; k < 1500; k++)
        if (k != 1200)
            rs_tarball_feed_ready(feed, k);
    rs_tarball_feed_abandon(feed, 1200);
    CHECK(rs_tarball_feed_room(feed, 1100, &err) == 0);
    CHECK(rs_tarball_feed_room(feed, 2500, &err) == -1 && strstr(err.msg, "an earlier file failed"));
    rs_tarball_feed_free(feed);
    CHECK(access(out, F_OK) != 0);
}

typedef struct marker {
    rs_tarball_feed *feed;
    size_t first;      /* marks first, first+2, ... from the end down */
} marker;

static void *mark(void *arg)
{
    marker *m = arg;

    for (size_t k = N_FILES; k-- > 0;)
        if (k % 2 == m->first) {
            usleep(200);
            rs_tarball_feed_ready(m->feed, k);
        }
    return NULL;
}

static bool same_file(const char *a, const char *b)
{
    rs_bytes x = { 0 }, y = { 0 };
    rs_error err;
    bool same = rs_read_file(a, 1 << 24, &x, &err) == 0 && rs_read_file(b, 1 << 24, &y, &err) == 0 &&
                x.len == y.len && !memcmp(x.data, y.data, x.len);

    rs_bytes_free(&x);
    rs_bytes_free(&y);
    return same;
}

int main(void)
{
    char dir[] = "/tmp/rs-test-tarball-XXXXXX", path[1024], ref[1024], out[1024];
    rs_tarball *t = NULL;
    rs_tarball_feed *feed = NULL;
    pthread_t threads[2];
    marker m[2];
    rs_error err;
    bool ok = true;

    CHECK(mkdtemp(dir) != NULL);
    if (rs_tarball_open(&t, "/dev/null/x", 0, &err) < 0 && strstr(err.msg, "libarchive")) {
        return harness_skip("test_tarball", err.msg);
    }
    for (size_t i = 0; i < N_FILES; i++) {
        lens[i] = strstr(files[i], "empty") ? 0 : 1 + (i * 37) % sizeof(data[i]);
        memset(data[i], 'a' + (int)i, lens[i]);
        snprintf(path, sizeof(path), "%s/tree/%s", dir, files[i]);
        CHECK(rs_write_new_file(path, data[i], lens[i], 0644, &err) == 0);
        sorted[i] = files[i];
    }
    qsort(sorted, N_FILES, sizeof(sorted[0]), cmp_path);
    CHECK(rs_tarball_path_cmp("a/b", "a-b") < 0 && rs_tarball_path_cmp("a/b", "a.b") < 0);
    CHECK(rs_tarball_path_cmp("a", "a/b") < 0 && rs_tarball_path_cmp("a/b", "a!b") < 0);
    CHECK(rs_tarball_path_cmp("a\xc3\xa9", "a/z") > 0 && rs_tarball_path_cmp("ab", "ab") == 0);
    /* With a suffix, as if it were written on: x.sig before x.sig/y.sig, x.s before x.sig. */
    CHECK(rs_tarball_suffixed_cmp("x", "x.sig/y", ".sig") < 0 && rs_tarball_suffixed_cmp("x.sig/y", "x", ".sig") > 0);
    CHECK(rs_tarball_suffixed_cmp("x", "x.s", ".sig") > 0 && rs_tarball_suffixed_cmp("ab", "a", ".sig") > 0);
    CHECK(rs_tarball_suffixed_cmp("a/b", "a", ".sig") < 0 && rs_tarball_suffixed_cmp("x", "x", ".sig") == 0);

    /* The reference: the tree on disk. */
    snprintf(path, sizeof(path), "%s/tree", dir);
    snprintf(ref, sizeof(ref), "%s/ref.tar.gz", dir);
    CHECK(rs_tarball_write(path, ref, 1700000000, &err) == 0);

    /* From memory, in order. */
    snprintf(out, sizeof(out), "%s/mem.tar.gz", dir);
    CHECK(rs_tarball_open(&t, out, 1700000000, &err) == 0);
    for (size_t k = 0; k < N_FILES; k++)
        ok &= rs_tarball_add_file(t, sorted[k], data[data_of(sorted[k])], lens[data_of(sorted[k])], &err) == 0;
    CHECK(ok);
    CHECK(rs_tarball_commit(t, &err) == 0);
    rs_tarball_free(t);
    CHECK(same_file(ref, out));

    /* On the feed's thread, files ready from last to first, from two threads. */
    snprintf(out, sizeof(out), "%s/feed.tar.gz", dir);
    CHECK(rs_tarball_feed_start(&feed, out, 1700000000, N_FILES, entry, NULL, &err) == 0);
    for (int i = 0; i < 2; i++) {
        m[i] = (marker){ feed, (size_t)i };
        pthread_create(&threads[i], NULL, mark, &m[i]);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    CHECK(rs_tarball_feed_finish(feed, &err) == 0);
    rs_tarball_feed_free(feed);
    CHECK(same_file(ref, out));

    /* A feed stopped before all are ready leaves nothing. */
    snprintf(out, sizeof(out), "%s/stopped.tar.gz", dir);
    CHECK(rs_tarball_feed_start(&feed, out, 0, N_FILES, entry, NULL, &err) == 0);
    rs_tarball_feed_ready(feed, 0);
    rs_tarball_feed_free(feed);
    CHECK(access(out, F_OK) != 0);

    failing_entry_stops(dir);
    room_bounds_files_ahead(dir);

    /* Out of order, twice, or a file where a directory must go: refused. */
    snprintf(out, sizeof(out), "%s/bad.tar.gz", dir);
    CHECK(rs_tarball_open(&t, out, 0, &err) == 0);
    CHECK(rs_tarball_add_file(t, "a/b", "x", 1, &err) == 0);
    CHECK(rs_tarball_add_file(t, "a/b", "x", 1, &err) == -1 && strstr(err.msg, "twice or out of order"));
    CHECK(rs_tarball_add_file(t, "a-b", "x", 1, &err) == 0);
    CHECK(rs_tarball_add_file(t, "a", "x", 1, &err) == -1);
    CHECK(rs_tarball_add_file(t, "a-b/c", "x", 1, &err) == -1 && strstr(err.msg, "a file and a directory"));
    rs_tarball_free(t);
    CHECK(access(out, F_OK) != 0);

    snprintf(path, sizeof(path), "rm -r '%s'", dir);
    CHECK(system(path) == 0);
    return harness_finish("test_tarball");
}

#include "translog/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "base/sync_set.h"
#include "translog/log_internal.h"
#include "translog/tiles.h"



char *rs_translog_encode(const json_t *entry)
{
    return json_dumps(entry, JSON_COMPACT | JSON_SORT_KEYS);
}

uint64_t rs_translog_size(rs_translog *l)
{
    return l->size;
}

/* The log's tiles and checkpoint are published: readable by all on
 * purpose (exactly 0644, set on the descriptor), whatever the umask of the
 * process writing them; the service's own state stays 0600 under its 077. */
static int write_new(const char *path, const void *data, size_t len, rs_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, RS_LOG_FILE_MODE), rc;

    if (fd < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    rc = fchmod(fd, RS_LOG_FILE_MODE) < 0 ? -1 : rs_write_all(fd, data, len);
    if (close(fd) < 0 || rc < 0) {
        unlink(path);
        return rs_fail(err, "%s: %s", path, strerror(errno));
    }
    return 0;
}

/* Writes rel by temporary file and rename, without a sync of its own: the
 * file and the directories whose entries changed join `sync`, which the
 * checkpoint makes durable all together. Readers see the old file or the
 * new one; a crash leaves at most the temporary, which the next write of
 * that path replaces. */
static int put_file(rs_translog *l, rs_sync_set *sync, const char *rel, const void *data, size_t len, rs_error *err)
{
    _cleanup_free_ char *path = NULL, *tmp = NULL;
    size_t made;

    if (!(path = rs_path_join(l->dir, rel)) || asprintf(&tmp, "%s.tmp", path) < 0)
        return rs_fail(err, "out of memory");
    if (rs_mkdir_parents_mode(path, RS_LOG_DIR_MODE, &made, err) < 0 || write_new(tmp, data, len, err) < 0)
        return -1;
    if (rename(tmp, path) < 0) {
        unlink(tmp);
        return rs_fail(err, "%s: %s", path, strerror(errno));
    }
    return rs_sync_set_new_file(sync, path, made, err);
}

static int put_tile(rs_translog *l, rs_sync_set *sync, int level, uint64_t index, unsigned width, const void *data,
                    size_t len, rs_error *err)
{
    _cleanup_free_ char *rel = rs_tile_path(level, index, width);

    return rel ? put_file(l, sync, rel, data, len, err) : rs_fail(err, "out of memory");
}

/* Adds a hash at level 8*t; a tile that fills is written and its root
 * carried one tile level up. l->size already counts the new entry. */
static int push_hash(rs_translog *l, rs_sync_set *sync, unsigned t, const rs_hash *h, rs_error *err)
{
    rs_hash root;

    if (t >= RS_TILE_LEVELS)
        return rs_fail(err, "the log is full");
    l->edge[t][l->edge_n[t]++] = *h;
    if (l->edge_n[t] < RS_TILE_WIDTH)
        return 0;
    if (put_tile(l, sync, (int)t, ((l->size >> (RS_TILE_HEIGHT * t)) / RS_TILE_WIDTH) - 1, RS_TILE_WIDTH,
                 l->edge[t], sizeof(l->edge[t]), err) < 0)
        return -1;
    rs_merkle_root(l->edge[t], RS_TILE_WIDTH, &root);
    l->edge_n[t] = 0;
    return push_hash(l, sync, t + 1, &root, err);
}

static int add_entry(rs_translog *l, rs_sync_set *sync, const char *bytes, rs_hash *leaf, rs_error *err)
{
    size_t len = strlen(bytes);
    uint8_t prefix[2] = { (uint8_t)(len >> 8), (uint8_t)len };

    if (len > RS_ENTRY_MAX)
        return rs_fail(err, "a log entry of %zu bytes, over the limit of %d", len, RS_ENTRY_MAX);
    if (rs_bytes_append(&l->bundle, prefix, 2, err) < 0 || rs_bytes_append(&l->bundle, bytes, len, err) < 0 ||
        rs_merkle_leaf(bytes, len, leaf, err) < 0)
        return -1;
    l->size++;
    rs_merkle_frontier_push(&l->frontier, leaf);
    if (l->size % RS_TILE_WIDTH == 0) {
        if (put_tile(l, sync, RS_TILE_ENTRIES, l->size / RS_TILE_WIDTH - 1, RS_TILE_WIDTH, l->bundle.data,
                     l->bundle.len, err) < 0)
            return -1;
        l->bundle.len = 0;
    }
    return push_hash(l, sync, 0, leaf, err);
}

/* The partial bundle and tiles of the new size. A level whose count of
 * hashes did not change keeps the partial tile it has on disk: the same
 * name and bytes, already durable, so it is neither written nor synced
 * again (above level 0 that is all but one append in 256). */
static int put_right_edge(rs_translog *l, rs_sync_set *sync, uint64_t old_size, rs_error *err)
{
    if (l->bundle.len && put_tile(l, sync, RS_TILE_ENTRIES, l->size / RS_TILE_WIDTH,
                                  (unsigned)(l->size % RS_TILE_WIDTH), l->bundle.data, l->bundle.len, err) < 0)
        return -1;
    for (unsigned t = 0; t < RS_TILE_LEVELS; t++) {
        uint64_t count = l->size >> (RS_TILE_HEIGHT * t);

        if (l->edge_n[t] && count != old_size >> (RS_TILE_HEIGHT * t) &&
            put_tile(l, sync, (int)t, count / RS_TILE_WIDTH, l->edge_n[t], l->edge[t],
                     l->edge_n[t] * sizeof(rs_hash), err) < 0)
            return -1;
    }
    return 0;
}

static uint64_t now_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The new checkpoint becomes current only once everything it names is
 * durable: the files the append wrote and the directories whose entries
 * changed (sync, each once, synced side by side) and the checkpoint's own
 * bytes; then the rename, durable once the log directory is synced. Only
 * these paths: a sync of the whole file system would also wait for
 * whatever else the machine has written, at no bounded cost. With st,
 * the syncs and their time are counted there. */
static int put_checkpoint(rs_translog *l, rs_sync_set *sync, rs_translog_stats *st, rs_error *err)
{
    rs_hash root;
    _cleanup_free_ char *text = NULL, *signed_note = NULL, *path = NULL, *tmp = NULL;
    uint64_t t0 = now_ns();
    size_t n;

    rs_merkle_frontier_root(&l->frontier, &root);
    if (!(text = rs_checkpoint_text(l->key.name, l->size, &root)) || !(path = rs_path_join(l->dir, "checkpoint")) ||
        asprintf(&tmp, "%s.tmp", path) < 0)
        return rs_fail(err, "out of memory");
    if (rs_note_sign(&l->key, text, &signed_note, err) < 0 || write_new(tmp, signed_note, strlen(signed_note), err) < 0)
        return -1;
    n = rs_sync_set_syncs(sync) + 1;
    if (rs_sync_set_file(sync, tmp, err) < 0 || rs_sync_set_run(sync, err) < 0) {
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) < 0) {
        int e = errno;

        unlink(tmp);
        return rs_fail(err, "%s: %s", path, strerror(e));
    }
    if (rs_sync_path(l->dir, err) < 0)
        return -1;
    if (st) {
        st->syncs += n + 1;
        st->sync_ns += now_ns() - t0;
    }
    return 0;
}

int rs_log_put_checkpoint(rs_translog *l, rs_error *err)
{
    _cleanup_(rs_sync_set_free) rs_sync_set sync = { 0 };

    return put_checkpoint(l, &sync, NULL, err);
}

/* The partial tile of `level` that the tree of `from` entries had and the
 * tree of `to` (whose checkpoint is durable) has not, to remove, with its
 * directory once the tile is full. No later tree names it either: a
 * level's count of hashes only grows, and so the width of its tile. */
static int drop_partial(rs_translog *l, rs_sync_set *sync, int level, uint64_t from, uint64_t to, rs_error *err)
{
    uint64_t index = (level == RS_TILE_ENTRIES ? from : from >> (RS_TILE_HEIGHT * level)) / RS_TILE_WIDTH;
    unsigned old_w = rs_tile_width(from, level, index), new_w = rs_tile_width(to, level, index);
    _cleanup_free_ char *rel = NULL, *path = NULL;

    if (old_w == 0 || old_w == new_w)
        return 0;
    if (!(rel = rs_tile_path(level, index, old_w)) || !(path = rs_path_join(l->dir, rel)))
        return rs_fail(err, "out of memory");
    return rs_sync_set_remove(sync, path, new_w == RS_TILE_WIDTH, err);
}

/* The partial tiles the last append made stale, into sync. */
static int drop_stale(rs_translog *l, rs_sync_set *sync, rs_error *err)
{
    if (l->drop_to == l->drop_from)
        return 0;
    if (drop_partial(l, sync, RS_TILE_ENTRIES, l->drop_from, l->drop_to, err) < 0)
        return -1;
    for (int t = 0; t < RS_TILE_LEVELS; t++)
        if (drop_partial(l, sync, t, l->drop_from, l->drop_to, err) < 0)
            return -1;
    return 0;
}

void rs_log_drop_stale(rs_translog *l)
{
    _cleanup_(rs_sync_set_free) rs_sync_set sync = { 0 };
    rs_error ignored;

    if (drop_stale(l, &sync, &ignored) == 0 && rs_sync_set_run(&sync, &ignored) == 0)
        l->drop_from = l->drop_to;
}

static int append_locked(rs_translog *l, char *const *bytes, size_t n, rs_error *err)
{
    _cleanup_free_ rs_hash *leaves = calloc(n ? n : 1, sizeof(rs_hash));
    _cleanup_(rs_sync_set_free) rs_sync_set sync = { 0 };
    uint64_t old_size = l->size;

    if (!leaves)
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < n; i++)
        if (add_entry(l, &sync, bytes[i], &leaves[i], err) < 0)
            return -1;
    /* What the last append made stale goes beside this one's syncs, off
     * the path of any answer (a removal can cost what a sync does). */
    if (put_right_edge(l, &sync, old_size, err) < 0 || rs_leaf_index_add(l->dir, leaves, old_size, n, &sync, err) < 0 ||
        drop_stale(l, &sync, err) < 0 || put_checkpoint(l, &sync, &l->stats, err) < 0)
        return -1;
    l->drop_from = old_size;
    l->drop_to = l->size;
    return 0;
}

/* The batch of one caller, waiting to be written. */
typedef struct pending {
    char *const *bytes;
    size_t n;
    uint64_t first;
    int rc;
    rs_error err;
    bool done;
    struct pending *next;
} pending;

/* One more checkpoint, holding `appends` callers' batches. */
static void count_group(rs_translog_stats *st, size_t appends, size_t entries)
{
    unsigned b = 0;

    while (b + 1 < RS_TRANSLOG_GROUP_BUCKETS && appends > (size_t)1 << b)
        b++;
    st->by_appends[b]++;
    st->checkpoints++;
    st->appends += appends;
    st->entries += entries;
    if (appends > st->max_appends)
        st->max_appends = appends;
}

/* Writes every queued batch under one checkpoint; l->mu held. */
static void commit_queue(rs_translog *l)
{
    pending *q, *p;
    size_t total = 0, at = 0, callers = 0;
    char **all;
    uint64_t old_size = l->size;
    rs_error err = { 0 };
    int rc;

    pthread_mutex_lock(&l->queue_mu);
    for (q = NULL; l->queue; q = p) {   /* oldest first: entries in the order they came */
        p = l->queue;
        l->queue = p->next;
        p->next = q;
    }
    pthread_mutex_unlock(&l->queue_mu);
    for (p = q; p; p = p->next, callers++)
        total += p->n;
    all = calloc(total ? total : 1, sizeof(char *));
    for (p = q; all && p; at += p->n, p = p->next) {
        if (p->n)
            memcpy(all + at, p->bytes, p->n * sizeof(char *));
        p->first = old_size + at;
    }
    rc = !all                   ? rs_fail(&err, "out of memory")
         : l->size == UINT64_MAX ? rs_fail(&err, "%s: the log is broken by an earlier failed append", l->dir)
         : total                 ? append_locked(l, all, total, &err)
                                 : 0;
    if (rc < 0 && l->size != UINT64_MAX) {
        /* Back to what the disk holds: the checkpoint was not replaced. */
        rs_error ignored;

        l->size = old_size;
        if (rs_log_load_edge(l, NULL, &ignored) < 0)
            l->size = UINT64_MAX;   /* refuses every later append */
    } else if (rc == 0 && total) {
        count_group(&l->stats, callers, total);
    }
    free(all);
    pthread_mutex_lock(&l->queue_mu);   /* a waiter reads done under it, then is gone */
    for (p = q; p; p = p->next) {
        p->rc = rc;
        p->err = err;
        p->done = true;
    }
    pthread_mutex_unlock(&l->queue_mu);
}

/* Group commit: a caller queues its batch; one caller at a time commits
 * everything queued under one checkpoint, so concurrent requests share
 * its syncs. The others wait for their batch to be done, not for the
 * writer's lock: a batch once committed returns at once, instead of
 * waiting its turn at the lock behind the next commit (and keeping its
 * client from sending the request that commit could have taken). */
int rs_translog_append_raw(rs_translog *l, char *const *bytes, size_t n, uint64_t *first, rs_error *err)
{
    pending me = { .bytes = bytes, .n = n };

    pthread_mutex_lock(&l->queue_mu);
    me.next = l->queue;
    l->queue = &me;
    while (!me.done) {
        if (l->committing) {
            pthread_cond_wait(&l->committed, &l->queue_mu);
            continue;
        }
        l->committing = true;
        pthread_mutex_unlock(&l->queue_mu);
        pthread_mutex_lock(&l->mu);
        commit_queue(l);
        pthread_mutex_unlock(&l->mu);
        pthread_mutex_lock(&l->queue_mu);
        l->committing = false;
        pthread_cond_broadcast(&l->committed);
    }
    pthread_mutex_unlock(&l->queue_mu);
    if (first)
        *first = me.first;
    if (me.rc < 0)
        *err = me.err;
    return me.rc;
}

int rs_translog_append(rs_translog *l, json_t *const *entries, size_t n, uint64_t *first, rs_error *err)
{
    char **bytes = calloc(n ? n : 1, sizeof(char *));
    int rc = 0;

    if (!bytes)
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < n && rc == 0; i++)
        if (!(bytes[i] = rs_translog_encode(entries[i])))
            rc = rs_fail(err, "out of memory");
    if (rc == 0)
        rc = rs_translog_append_raw(l, bytes, n, first, err);
    for (size_t i = 0; i < n; i++)
        free(bytes[i]);
    free(bytes);
    return rc;
}

void rs_translog_root(rs_translog *l, rs_hash *out)
{
    pthread_mutex_lock(&l->mu);
    rs_merkle_frontier_root(&l->frontier, out);
    pthread_mutex_unlock(&l->mu);
}

void rs_translog_stats_get(rs_translog *l, rs_translog_stats *out)
{
    pthread_mutex_lock(&l->mu);
    *out = l->stats;
    pthread_mutex_unlock(&l->mu);
}

int rs_translog_contains(rs_translog *l, const json_t *entry, bool *found, rs_error *err)
{
    _cleanup_free_ char *bytes = rs_translog_encode(entry);
    int rc;

    *found = false;
    if (!bytes)
        return rs_fail(err, "out of memory");
    pthread_mutex_lock(&l->mu);
    rc = rs_log_find_entry(l->dir, l->size, bytes, strlen(bytes), NULL, found, err);
    pthread_mutex_unlock(&l->mu);
    return rc;
}

int rs_translog_checkpoint(rs_translog *l, rs_error *err)
{
    return l->size == UINT64_MAX ? rs_fail(err, "%s: the log is broken by an earlier failed append", l->dir) : 0;
}

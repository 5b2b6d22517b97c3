/* Opening the log: the checkpoint and the right edge only, O(log n). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "translog/log_internal.h"
#include "translog/tiles.h"

#define MAX_CHECKPOINT RS_NOTE_MAX_SIZE

void rs_translog_close(rs_translog *l)
{
    if (!l)
        return;
    pthread_mutex_destroy(&l->mu);
    pthread_mutex_destroy(&l->queue_mu);
    rs_note_key_free(&l->key);
    rs_bytes_free(&l->bundle);
    if (l->lock_fd >= 0)
        close(l->lock_fd);
    free(l->dir);
    free(l);
}

/* The right edge of every tile level: the hashes after the last full tile. */
static int load_edge_tiles(rs_translog *l, rs_error *err)
{
    _cleanup_bytes_ rs_bytes b = { 0 };

    memset(l->edge_n, 0, sizeof(l->edge_n));
    for (unsigned t = 0; t < RS_TILE_LEVELS; t++) {
        uint64_t count = l->size >> (RS_TILE_HEIGHT * t);
        unsigned w = (unsigned)(count % RS_TILE_WIDTH);

        if (w == 0)
            continue;
        if (rs_tile_read_file(l->dir, (int)t, count / RS_TILE_WIDTH, w, &b, err) < 0)
            return -1;
        memcpy(l->edge[t], b.data, w * sizeof(rs_hash));
        l->edge_n[t] = w;
        rs_bytes_free(&b);
    }
    return 0;
}

/* The partial last entry bundle, each entry checked against its leaf. */
static int load_last_bundle(rs_translog *l, rs_error *err)
{
    _cleanup_bytes_ rs_bytes b = { 0 };
    unsigned w = (unsigned)(l->size % RS_TILE_WIDTH);
    size_t offs[RS_TILE_WIDTH], lens[RS_TILE_WIDTH];
    rs_hash got;

    l->bundle.len = 0;
    if (w == 0)
        return 0;
    if (rs_tile_read_file(l->dir, RS_TILE_ENTRIES, l->size / RS_TILE_WIDTH, w, &b, err) < 0 ||
        rs_bundle_split(b.data, b.len, w, offs, lens, err) < 0)
        return rs_error_prefix(err, "%s: the last entry bundle", l->dir);
    for (unsigned i = 0; i < w; i++) {
        if (rs_merkle_leaf(b.data + offs[i], lens[i], &got, err) < 0)
            return -1;
        if (memcmp(&got, &l->edge[0][i], sizeof(got)))
            return rs_fail(err, "%s: entry %llu does not match its tile", l->dir,
                           (unsigned long long)(l->size - w + i));
    }
    return rs_bytes_set(&l->bundle, b.data, b.len, err);
}

/* The frontier: one perfect subtree per bit of the size, largest first. */
static int load_frontier(rs_translog *l, rs_error *err)
{
    _cleanup_(rs_tile_reader_free) rs_tile_reader r = { .dir = l->dir, .size = l->size };

    memset(&l->frontier, 0, sizeof(l->frontier));
    for (unsigned bit = 64; bit-- > 0;) {
        if (!((l->size >> bit) & 1))
            continue;
        if (rs_tile_node(&r, bit, (l->size >> bit) - 1, &l->frontier.sub[l->frontier.count++], err) < 0)
            return rs_error_prefix(err, "%s", l->dir);
    }
    l->frontier.size = l->size;
    return 0;
}

int rs_log_load_edge(rs_translog *l, const rs_hash *root, rs_error *err)
{
    rs_hash got;

    if (load_edge_tiles(l, err) < 0 || load_last_bundle(l, err) < 0 || load_frontier(l, err) < 0)
        return -1;
    rs_merkle_frontier_root(&l->frontier, &got);
    if (root && memcmp(&got, root, sizeof(got)))
        return rs_fail(err, "%s: the tiles' root does not match the checkpoint's", l->dir);
    return 0;
}

/* Whether opening a log may make it (a missing checkpoint starts it empty). */
typedef enum { OPEN_EXISTING, OPEN_OR_CREATE } open_mode;

static int read_checkpoint(rs_translog *l, open_mode mode, rs_error *err)
{
    _cleanup_free_ char *path = NULL;
    _cleanup_bytes_ rs_bytes b = { 0 };
    _cleanup_(rs_note_free) rs_note note = { 0 };
    _cleanup_(rs_checkpoint_free) rs_checkpoint cp = { 0 };

    if (!(path = rs_path_join(l->dir, "checkpoint")))
        return rs_fail(err, "out of memory");
    if (access(path, F_OK) < 0 && errno == ENOENT && mode == OPEN_OR_CREATE) {
        _cleanup_free_ char *former = NULL;

        if (asprintf(&former, "%s/entries.jsonl", l->dir) < 0)
            return rs_fail(err, "out of memory");
        if (access(former, F_OK) == 0)
            return rs_fail(err, "%s: a log in the former JSONL format; convert it with 'reprosign log migrate'",
                           l->dir);
        l->size = 0;
        return rs_log_put_checkpoint(l, err);
    }
    if (rs_read_file(path, MAX_CHECKPOINT, &b, err) < 0 ||
        rs_checkpoint_open((const char *)b.data, b.len, &l->key, &note, &cp, err) < 0)
        return rs_error_prefix(err, "%s", path);
    l->size = cp.size;
    return rs_log_load_edge(l, &cp.root, err);
}

/* A new log appears whole: made beside its place with its empty
 * checkpoint, then renamed there, so a crash leaves no log or a log. */
static int create_log(rs_translog *l, rs_error *err)
{
    _cleanup_free_ char *tmp = NULL, *parent = strdup(l->dir), *dir = l->dir;
    char *slash = parent ? strrchr(parent, '/') : NULL;
    int rc;

    if (!parent || asprintf(&tmp, "%s.new", dir) < 0) {
        l->dir = TAKE_PTR(dir);
        return rs_fail(err, "out of memory");
    }
    rs_remove_tree(tmp);
    if (mkdir(tmp, 0755) < 0) {
        l->dir = TAKE_PTR(dir);
        return rs_fail(err, "%s: %s", tmp, strerror(errno));
    }
    l->dir = tmp;
    l->size = 0;
    rc = rs_log_put_checkpoint(l, err);
    l->dir = TAKE_PTR(dir);
    if (slash)
        *slash = '\0';
    if (rc == 0 && rename(tmp, l->dir) < 0)
        rc = rs_fail(err, "%s: %s", l->dir, strerror(errno));
    if (rc == 0)
        return rs_sync_path(slash ? (slash == parent ? "/" : parent) : ".", err);
    rs_remove_tree(tmp);
    return -1;
}

static int open_log(const char *dir, const char *key_path, open_mode mode, rs_translog **out, rs_error *err)
{
    _cleanup_(rs_translogp) rs_translog *l = calloc(1, sizeof(*l));
    _cleanup_free_ char *lock = NULL;
    bool busy;

    *out = NULL;
    if (!l)
        return rs_fail(err, "out of memory");
    l->lock_fd = -1;
    pthread_mutex_init(&l->mu, NULL);
    pthread_mutex_init(&l->queue_mu, NULL);
    if (!(l->dir = strdup(dir)) || !(lock = rs_path_join(dir, ".lock")))
        return rs_fail(err, "out of memory");
    if (rs_note_skey_load(key_path, &l->key, err) < 0)
        return -1;
    if (l->key.alg != RS_NOTE_ALG_ED25519)
        return rs_fail(err, "%s: a cosigner key cannot sign checkpoints", key_path);
    if (mode == OPEN_OR_CREATE && access(dir, F_OK) < 0 && errno == ENOENT && create_log(l, err) < 0)
        return -1;
    if (rs_lock_file(lock, &l->lock_fd, &busy, err) < 0 || read_checkpoint(l, mode, err) < 0)
        return -1;
    *out = TAKE_PTR(l);
    return 0;
}

int rs_translog_create(const char *dir, const char *key_path, rs_translog **out, rs_error *err)
{
    return open_log(dir, key_path, OPEN_OR_CREATE, out, err);
}

int rs_translog_open(const char *dir, const char *key_path, rs_translog **out, rs_error *err)
{
    return open_log(dir, key_path, OPEN_EXISTING, out, err);
}

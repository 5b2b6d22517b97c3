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
    rs_log_drop_stale(l);
    pthread_mutex_destroy(&l->mu);
    pthread_mutex_destroy(&l->queue_mu);
    pthread_cond_destroy(&l->committed);
    rs_note_key_free(&l->key);
    rs_bytes_free(&l->bundle);
    if (l->lock_fd >= 0)
        close(l->lock_fd);
    free(l->dir);
    free(l);
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
    if (rs_mkdir_exact(tmp, RS_LOG_DIR_MODE, err) < 0) {
        l->dir = TAKE_PTR(dir);
        return -1;
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
    pthread_cond_init(&l->committed, NULL);
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

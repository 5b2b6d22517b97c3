/* The leaf index (see translog/log.h): 256 bucket files by the leaf hash's
 * first byte, so a lookup reads 1/256 of 16 bytes per entry (40 KiB for a
 * million entries). It is derived data, written before the checkpoint and
 * synced with the tiles: a record may name an entry a crash never
 * committed, so every candidate is checked against its bundle, but every
 * entry a checkpoint holds has its record (the service's restart check
 * and `prove --entry` rely on that). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "base/sync_set.h"
#include "translog/log.h"
#include "translog/tiles.h"

#define RECORD_LEN 16
#define KEY_LEN 8
#define BUCKETS 256
/* A bucket of a 2^32-entry log; anything larger is not ours. */
#define MAX_BUCKET ((size_t)RECORD_LEN << 24)

static char *bucket_path(const char *dir, unsigned b)
{
    char *p = NULL;

    return asprintf(&p, "%s/leaf-index/%02x", dir, b) < 0 ? NULL : p;
}

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static uint64_t get_be64(const uint8_t *p)
{
    uint64_t v = 0;

    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

static int append_bucket(const char *dir, unsigned b, const rs_hash *leaves, uint64_t first, size_t n,
                         rs_sync_set *sync, rs_error *err)
{
    _cleanup_free_ char *path = bucket_path(dir, b);
    _cleanup_free_ uint8_t *buf = malloc(n * RECORD_LEN);
    _cleanup_close_ int fd = -1;
    size_t len = 0, made = 0;
    bool created = false;

    if (!path || !buf)
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (leaves[i].b[0] != b)
            continue;
        memcpy(buf + len, leaves[i].b + 1, KEY_LEN);
        put_be64(buf + len + KEY_LEN, first + i);
        len += RECORD_LEN;
    }
    if (len == 0)
        return 0;
    fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        created = true;
        if (rs_mkdir_parents_mode(path, RS_LOG_DIR_MODE, &made, err) < 0)
            return -1;
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, RS_LOG_FILE_MODE);
        if (fd >= 0 && fchmod(fd, RS_LOG_FILE_MODE) < 0)   /* published, whatever the umask (log.c) */
            return rs_fail(err, "%s: %s", path, strerror(errno));
    }
    if (fd < 0 || rs_write_all(fd, buf, len) < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    return created ? rs_sync_set_new_file(sync, path, made, err) : rs_sync_set_file(sync, path, err);
}

int rs_leaf_index_add(const char *dir, const rs_hash *leaves, uint64_t first, size_t n, rs_sync_set *sync,
                      rs_error *err)
{
    bool used[BUCKETS] = { 0 };

    for (size_t i = 0; i < n; i++)
        used[leaves[i].b[0]] = true;
    for (unsigned b = 0; b < BUCKETS; b++)
        if (used[b] && append_bucket(dir, b, leaves, first, n, sync, err) < 0)
            return -1;
    return 0;
}

int rs_leaf_index_find(const char *dir, const rs_hash *leaf, uint64_t size, uint64_t **idx, size_t *n, rs_error *err)
{
    _cleanup_free_ char *path = bucket_path(dir, leaf->b[0]);
    _cleanup_bytes_ rs_bytes b = { 0 };

    *idx = NULL;
    *n = 0;
    if (!path)
        return rs_fail(err, "out of memory");
    if (access(path, F_OK) < 0 && errno == ENOENT)
        return 0;
    if (rs_read_file(path, MAX_BUCKET, &b, err) < 0)
        return rs_error_prefix(err, "%s", path);
    for (size_t off = 0; off + RECORD_LEN <= b.len; off += RECORD_LEN) {
        uint64_t i = get_be64(b.data + off + KEY_LEN);
        uint64_t *grown;

        if (memcmp(b.data + off, leaf->b + 1, KEY_LEN) || i >= size)
            continue;
        if (!(grown = realloc(*idx, (*n + 1) * sizeof(**idx)))) {
            free(*idx);
            *idx = NULL;
            return rs_fail(err, "out of memory");
        }
        *idx = grown;
        (*idx)[(*n)++] = i;
    }
    return 0;
}

int rs_log_read_entry(const char *dir, uint64_t size, uint64_t index, rs_bytes *out, rs_error *err)
{
    uint64_t bundle = index / RS_TILE_WIDTH;
    unsigned w = rs_tile_width(size, RS_TILE_ENTRIES, bundle), k = (unsigned)(index % RS_TILE_WIDTH);
    _cleanup_bytes_ rs_bytes b = { 0 };
    size_t offs[RS_TILE_WIDTH], lens[RS_TILE_WIDTH];

    memset(out, 0, sizeof(*out));
    if (index >= size)
        return rs_fail(err, "entry %llu is not in the tree of %llu entries", (unsigned long long)index,
                       (unsigned long long)size);
    if (rs_tile_read_file(dir, RS_TILE_ENTRIES, bundle, w, &b, err) < 0 ||
        rs_bundle_split(b.data, b.len, w, offs, lens, err) < 0)
        return -1;
    return rs_bytes_set(out, b.data + offs[k], lens[k], err);
}

int rs_log_find_entry(const char *dir, uint64_t size, const char *bytes, size_t len, uint64_t *index, bool *found,
                      rs_error *err)
{
    _cleanup_free_ uint64_t *idx = NULL;
    size_t n = 0;
    rs_hash leaf;

    *found = false;
    if (rs_merkle_leaf(bytes, len, &leaf, err) < 0 || rs_leaf_index_find(dir, &leaf, size, &idx, &n, err) < 0)
        return -1;
    for (size_t i = 0; i < n && !*found; i++) {
        _cleanup_bytes_ rs_bytes e = { 0 };

        if (rs_log_read_entry(dir, size, idx[i], &e, err) < 0)
            return -1;
        *found = e.len == len && !memcmp(e.data, bytes, len);
        if (*found && index)
            *index = idx[i];
    }
    return 0;
}

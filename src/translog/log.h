/* The transparency log: every signature the service makes, as a
 * c2sp.org/tlog-tiles log (see translog/tiles.h and docs/transparency-log.md)
 * whose checkpoints are signed notes by a dedicated Ed25519 log key.
 *
 * An entry is a JSON object, encoded canonically (compact, keys sorted,
 * UTF-8): those bytes are the leaf data. Appending writes only the right
 * edge: the new entries' bundles and the tiles on their path to the root,
 * each by temporary file, fsync and rename; then the directories are
 * synced, and last the checkpoint is replaced the same way. A crash at any
 * point leaves the previous checkpoint, whose files are all still there,
 * or the new one. Opening reads the checkpoint and the right edge only. */
#ifndef RS_TRANSLOG_H
#define RS_TRANSLOG_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/bytes.h"
#include "base/cleanup.h"
#include "translog/merkle.h"
#include "translog/note.h"

typedef struct rs_translog rs_translog;

/* Opens the log in dir for appending; key_path is the note signer key
 * (PRIVATE+KEY+...), whose name is the log's origin. The checkpoint must
 * be signed by it and match the tiles' right edge. */
int rs_translog_open(const char *dir, const char *key_path, rs_translog **out, rs_error *err);
/* The same, making an empty log first when dir has none. */
int rs_translog_create(const char *dir, const char *key_path, rs_translog **out, rs_error *err);
void rs_translog_close(rs_translog *l);
DEFINE_POINTER_CLEANUP(rs_translogp, rs_translog, rs_translog_close)

uint64_t rs_translog_size(rs_translog *l);

/* Writes PREFIX.key (mode 0600) and PREFIX.vkey for a new Ed25519 key
 * named name (alg: RS_NOTE_ALG_ED25519 for a log, _COSIGNATURE for a
 * witness); refuses to replace either file. */
int rs_log_keygen(const char *name, uint8_t alg, const char *prefix, rs_error *err);

/* The canonical bytes of an entry (malloc'd, NUL-terminated). */
char *rs_translog_encode(const json_t *entry);

/* Appends a batch of entries (JSON objects, borrowed) under one new
 * checkpoint and returns once that checkpoint is on disk. Safe from many
 * threads (batches are serialised). *first receives the first entry's
 * index. */
int rs_translog_append(rs_translog *l, json_t *const *entries, size_t n, uint64_t *first, rs_error *err);
/* The same with entries already encoded (NUL-terminated, kept as they are). */
int rs_translog_append_raw(rs_translog *l, char *const *bytes, size_t n, uint64_t *first, rs_error *err);
void rs_translog_root(rs_translog *l, rs_hash *out);
/* Whether an entry with exactly these bytes is in the log (through the
 * leaf index, checked against its bundle). */
int rs_translog_contains(rs_translog *l, const json_t *entry, bool *found, rs_error *err);
/* How appends shared checkpoints since the log was opened: concurrent
 * callers (the socket's requests) are committed together, and each
 * checkpoint syncs the files it names. by_appends counts checkpoints by
 * the batches they held: 1, 2, 3-4, 5-8, ... 65-128, and more. */
#define RS_TRANSLOG_GROUP_BUCKETS 9
typedef struct rs_translog_stats {
    uint64_t checkpoints;
    uint64_t appends;        /* callers' batches, all committed */
    uint64_t entries;
    uint64_t max_appends;    /* the most one checkpoint held */
    uint64_t by_appends[RS_TRANSLOG_GROUP_BUCKETS];
    uint64_t syncs;          /* fsync and fdatasync calls */
    uint64_t sync_ns;        /* from the checkpoint's signature to its rename durable */
} rs_translog_stats;
void rs_translog_stats_get(rs_translog *l, rs_translog_stats *out);
/* Kept for callers that closed a run with a checkpoint: every append
 * already ends with one, so this only checks the log is open. */
int rs_translog_checkpoint(rs_translog *l, rs_error *err);

/* ---- the leaf index: leaf hash → entry index, for `log prove --entry` ----
 * leaf-index/<first byte of the hash, 2 hex digits>: records of 8 more
 * bytes of the hash and the big-endian index, written by every append.
 * Not part of the log a verifier reads: a log made by another writer has
 * none, and `prove --entry` then finds nothing (prove by INDEX works).
 * Adding names the buckets it wrote in sync, for the checkpoint to sync. */
struct rs_sync_set;
int rs_leaf_index_add(const char *dir, const rs_hash *leaves, uint64_t first, size_t n, struct rs_sync_set *sync,
                      rs_error *err);
/* Candidates for a leaf hash among the first `size` entries, in order; the
 * caller checks each against its bundle. */
int rs_leaf_index_find(const char *dir, const rs_hash *leaf, uint64_t size, uint64_t **idx, size_t *n, rs_error *err);
/* Looks an entry's bytes up: *found, and *index when found. */
int rs_log_find_entry(const char *dir, uint64_t size, const char *bytes, size_t len, uint64_t *index, bool *found,
                      rs_error *err);
/* The entry at index (read from its bundle in a tree of `size`). */
int rs_log_read_entry(const char *dir, uint64_t size, uint64_t index, rs_bytes *out, rs_error *err);

#endif

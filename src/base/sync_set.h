/* A set of paths to make durable together: the files one commit wrote and
 * the directories whose entries it changed, each named once, synced at
 * once. A commit that must survive a power cut syncs exactly these,
 * never the whole file system (whose cost grows with whatever else the
 * machine has written), and it syncs them side by side, so their writes
 * reach the disk together rather than one after another. Files an
 * earlier commit left stale can be removed beside them: a removal needs
 * no sync, but can cost as much as one (a file system mounted with
 * online discard trims the freed blocks then and there).
 *
 * What a sync promises is what the disk keeps: data it has acknowledged
 * after a flush survives (an honest write cache). */
#ifndef RS_SYNC_SET_H
#define RS_SYNC_SET_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

typedef enum { RS_SYNC_FILE, RS_SYNC_DIR, RS_SYNC_REMOVE, RS_SYNC_REMOVE_AND_DIR } rs_sync_kind;

typedef struct rs_sync_item {
    char *path;
    rs_sync_kind kind;
} rs_sync_item;

typedef struct rs_sync_set {
    rs_sync_item *items;
    size_t n, cap;
} rs_sync_set;

/* A file whose bytes changed (fdatasync: its data and what reading them
 * needs, its size). */
int rs_sync_set_file(rs_sync_set *s, const char *path, rs_error *err);
/* A directory whose entries changed (fsync). */
int rs_sync_set_dir(rs_sync_set *s, const char *path, rs_error *err);
/* A file that path names anew (made, or renamed there): the file, its
 * directory, and, when its missing parents were made (made: the length
 * rs_mkdir_parents_made gives, 0 if none was), each of those and the
 * directory that holds the shallowest. */
int rs_sync_set_new_file(rs_sync_set *s, const char *path, size_t made, rs_error *err);
/* A file to remove, and with and_dir its directory once empty; at best
 * effort: one already gone, or a directory still holding a crash's
 * leftover, is no failure. */
int rs_sync_set_remove(rs_sync_set *s, const char *path, bool and_dir, rs_error *err);
/* How many of the set's paths are to be synced (not removed). */
size_t rs_sync_set_syncs(const rs_sync_set *s);
/* Syncs (and removes) every path of the set, several at a time, and
 * empties the set; the first failure to sync names its path. */
int rs_sync_set_run(rs_sync_set *s, rs_error *err);
/* Empties the set without syncing (after a failed commit). */
void rs_sync_set_clear(rs_sync_set *s);
void rs_sync_set_free(rs_sync_set *s);

#endif

/* A set of paths to make durable together: the files one commit wrote and
 * the directories whose entries it changed, each named once, synced at
 * once. A commit that must survive a power cut syncs exactly these,
 * never the whole file system (whose cost grows with whatever else the
 * machine has written), and it syncs them side by side, so their writes
 * reach the disk together rather than one after another.
 *
 * What a sync promises is what the disk keeps: data it has acknowledged
 * after a flush survives (an honest write cache). */
#ifndef RS_SYNC_SET_H
#define RS_SYNC_SET_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

typedef struct rs_sync_item {
    char *path;
    bool dir;
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
/* Syncs every path of the set, several at a time, and empties the set;
 * the first failure names its path. */
int rs_sync_set_run(rs_sync_set *s, rs_error *err);
/* Empties the set without syncing (after a failed commit). */
void rs_sync_set_clear(rs_sync_set *s);
void rs_sync_set_free(rs_sync_set *s);

#endif

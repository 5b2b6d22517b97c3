/* Shared by log.c (appending), log_open.c (opening) and log_edge.c (the
 * right edge in memory). log_open.c uses the other two and log.c uses
 * log_edge.c; none calls back, so each can be read and changed alone. */
#ifndef RS_LOG_INTERNAL_H
#define RS_LOG_INTERNAL_H

#include <pthread.h>

#include "translog/log.h"
#include "translog/tiles.h"

struct rs_translog {
    char *dir;
    rs_note_key key;
    int lock_fd;
    pthread_mutex_t mu;                            /* the writer's, and readers' */
    pthread_mutex_t queue_mu;
    struct pending *queue;                         /* batches waiting, newest first */
    bool committing;                               /* a caller commits the queue (queue_mu) */
    pthread_cond_t committed;                      /* ... and has marked its batches done */
    uint64_t size;
    rs_hash edge[RS_TILE_LEVELS][RS_TILE_WIDTH];   /* each level's partial tile */
    unsigned edge_n[RS_TILE_LEVELS];
    rs_bytes bundle;                               /* the partial entry bundle */
    rs_merkle_frontier frontier;
    rs_translog_stats stats;                       /* under mu */
    /* The partial tiles of a tree of drop_from entries that the durable
     * checkpoint of drop_to no longer names: removed beside the next
     * append's syncs, or when the log is closed. */
    uint64_t drop_from, drop_to;
};

/* log_edge.c: reads the right edge of the tree of l->size entries into
 * memory; with root, checks the tree has it. */
int rs_log_load_edge(rs_translog *l, const rs_hash *root, rs_error *err);
/* log.c: makes everything written durable, then the checkpoint of l->size. */
int rs_log_put_checkpoint(rs_translog *l, rs_error *err);
/* log.c: removes the partial tiles the last append left stale. */
void rs_log_drop_stale(rs_translog *l);

#endif

/* `log monitor`: the log against the archive's published -signed
 * packages, both ways (see monitor.c). */
#ifndef RS_MONITOR_H
#define RS_MONITOR_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "translog/merkle.h"

typedef struct rs_monitor_report {
    void *ctx;
    /* A published signature the log lacks. */
    void (*unlogged_fn)(void *ctx, const char *tarball, const char *member);
    /* A logged signature (entry index, signature SHA-256) nothing published carries. */
    void (*unpublished_fn)(void *ctx, uint64_t index, const rs_hash *sig);
    size_t logged, published, tarballs, not_archive, unlogged, unpublished;
} rs_monitor_report;

/* Reads the first `size` entries of the log in dir (already audited) and
 * every tarball under archive (or the one tarball archive names). */
int rs_log_monitor(const char *dir, uint64_t size, const char *archive, rs_monitor_report *r, rs_error *err);

#endif

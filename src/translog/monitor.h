/* `log monitor`: the log against the archive's published packages, both
 * ways (see monitor.c). */
#ifndef RS_MONITOR_H
#define RS_MONITOR_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "crypto/trust.h"
#include "translog/merkle.h"

typedef struct rs_monitor_report {
    void *ctx;
    /* A published signature file (file: a tarball or a .diff.gz; member:
     * the path inside it, "outer/inner" for a nested tarball) the log lacks. */
    void (*unlogged_fn)(void *ctx, const char *file, const char *member);
    /* An image in a binary package (deb: its path; member: the path inside
     * it) that carries a signature by one of the service's certificates
     * (signer: its subject) over a digest ("sha256:HEX") no entry holds. */
    void (*unlogged_image_fn)(void *ctx, const char *deb, const char *member, const char *digest,
                              const char *signer);
    /* Something that may hold a signature and that the monitor cannot
     * judge (why: the reason): it fails the monitor as an unlogged one does. */
    void (*unchecked_fn)(void *ctx, const char *file, const char *member, const char *why);
    /* A logged signature (entry index, signature SHA-256) nothing published carries. */
    void (*unpublished_fn)(void *ctx, uint64_t index, const rs_hash *sig);
    size_t logged, published, tarballs, diffs, debs, images, not_archive, unlogged, unchecked, unpublished;
} rs_monitor_report;

/* Reads the first `size` entries of the log in dir (already audited) and
 * every tarball, 1.0 source .diff.gz and binary package (.deb, .udeb)
 * under archive (or the one file archive names). service holds the
 * service's certificates: a signature in a binary package is the
 * service's when it verifies with one of them. With service NULL a binary
 * package cannot be judged, and one found is an error. */
int rs_log_monitor(const char *dir, uint64_t size, const char *archive, const rs_trust *service, rs_monitor_report *r,
                   rs_error *err);

#endif

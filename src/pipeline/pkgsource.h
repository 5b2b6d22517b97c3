/* A package source: the container a binary package's files come from (an
 * unpacked root directory, a .deb read in place), behind one small table
 * of operations, so the pipeline never asks which kind it holds. The path
 * resolver (pipeline/pkgtree.h) is written once over `lookup`. */
#ifndef RS_PKGSOURCE_H
#define RS_PKGSOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "base/error.h"
#include "pipeline/deb.h"

struct rs_pkgtree;

/* Receives one file of the package: its name inside the package, a label
 * naming it for messages ("ROOT/NAME", "PKG.deb:NAME"), and a read-only fd
 * that take owns. Returns < 0 to stop with that error, RS_DEB_STOP to stop
 * as done, else 0. */
typedef int (*rs_pkg_take)(void *ctx, const char *name, const char *label, int fd, rs_error *err);

/* The files wanted from one source: names sorted by strcmp, no repeats. */
typedef struct rs_pkg_wanted {
    const char *const *names;
    size_t n;
    rs_pkg_take take;
    void *ctx;
} rs_pkg_wanted;

typedef struct rs_pkgsource_ops {
    const char *kind;
    /* Whether the directory entry `name` (st from stat()) is this kind. */
    bool (*claims)(const char *name, const struct stat *st);
    /* Fills in t's name, version and source from t->origin. */
    int (*open)(struct rs_pkgtree *t, rs_error *err);
    /* What `name` is (no symlink above its last component): 0 and *type,
     * with a symlink's target in *link; 1 when it does not exist. */
    int (*lookup)(struct rs_pkgtree *t, const char *name, rs_node_type *type, char **link, rs_error *err);
    /* The name whose bytes a resolved regular file has (a tarball's hard
     * link carries none of its own). */
    const char *(*bytes_of)(const struct rs_pkgtree *t, const char *name);
    /* Optional: before any path is resolved, hands over whichever wanted
     * names are regular files as named, where that is nearly free (a .deb
     * lists its entries on the same walk; a directory's files open with
     * no symlink allowed on the way), up to `jobs` at once where the
     * source allows. Errors in take are the caller's to keep or ignore. */
    int (*read_as_named)(struct rs_pkgtree *t, const rs_pkg_wanted *w, unsigned jobs, rs_error *err);
    /* A file read_as_named handed over is its own resolution: no symlink
     * lies on its path. Not so in a .deb, whose data.tar may hold both a
     * file and a symlink at a directory above it. */
    bool named_is_resolved;
    /* Hands over every wanted (resolved) name, up to `jobs` at once where
     * the source allows: take must then be safe to call from threads. */
    int (*read_resolved)(struct rs_pkgtree *t, const rs_pkg_wanted *w, unsigned jobs, rs_error *err);
    /* A resolved file once more, for a signer that reads the image
     * itself; *fd = -1 where the source is read only as a stream. */
    int (*reopen)(const struct rs_pkgtree *t, const char *name, int *fd, rs_error *err);
    void (*close)(struct rs_pkgtree *t);
    /* Optional: the SHA-256 of the container itself, the file rebuilders
     * attest (a .deb); NULL where there is none (an unpacked root). */
    int (*container_sha256)(const struct rs_pkgtree *t, uint8_t out[32], rs_error *err);
} rs_pkgsource_ops;

extern const rs_pkgsource_ops rs_pkgsource_dir;
extern const rs_pkgsource_ops rs_pkgsource_deb;

/* Every kind, in the order they are asked to claim an entry. */
extern const rs_pkgsource_ops *const rs_pkgsources[];

#endif

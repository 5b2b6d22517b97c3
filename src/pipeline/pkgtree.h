/* A binary package's file tree, from a .deb (read in place) or an unpacked
 * root directory, with one path resolver for both: symlinks are followed
 * inside the package and a path that would leave it is refused. */
#ifndef RS_PKGTREE_H
#define RS_PKGTREE_H

#include <stdbool.h>

#include "base/error.h"
#include "pipeline/deb.h"

typedef struct rs_pkgtree {
    char *name;
    char *version;        /* NULL when unknown (an unpacked root without DEBIAN/control) */
    char *source;         /* its Source:, likewise */
    char *origin;         /* the .deb or the directory */
    int root_fd;          /* the directory, opened once: every lookup and open is made
                             beneath it, so the tree cannot be moved mid-run (-1 for a .deb) */
    bool is_deb;
    bool indexed;
    rs_deb_index index;   /* .deb only, read on first resolve */
    struct rs_known_node *known;   /* directories and symlinks already looked up */
    size_t known_cap, known_count;
} rs_pkgtree;

void rs_pkgtree_free(rs_pkgtree *t);

/* Resolves `path` to the name of a regular file inside the package. */
int rs_pkgtree_resolve(rs_pkgtree *t, const char *path, char **resolved, rs_error *err);
/* Opens a resolved name of an unpacked root for reading. A symlink found
 * on the way now was not there when it was resolved, and is refused. */
int rs_pkgtree_open(const rs_pkgtree *t, const char *resolved, int *fd, rs_error *err);

/* For a .deb: streams the wanted regular files of its data.tar (see
 * rs_deb_stream), and lists the package's entries on the same walk when
 * no path has been resolved in it yet. */
int rs_pkgtree_stream(rs_pkgtree *t, rs_deb_want want, rs_deb_take take, void *ctx, rs_error *err);

/* The binary packages found in a directory: *.deb files and unpacked roots
 * named after their package. */
typedef struct rs_pkgset {
    rs_pkgtree *trees;
    size_t count;
} rs_pkgset;

int rs_pkgset_scan(const char *dir, rs_pkgset *out, rs_error *err);
void rs_pkgset_free(rs_pkgset *s);
/* The one candidate for `name`: the only one present, or the only one at
 * `version` when several are. */
int rs_pkgset_choose(rs_pkgset *s, const char *name, const char *version, rs_pkgtree **out, rs_error *err);

#endif

/* A binary package's file tree, from any package source (pipeline/
 * pkgsource.h), with one path resolver for all of them: symlinks are
 * followed inside the package and a path that would leave it is refused. */
#ifndef RS_PKGTREE_H
#define RS_PKGTREE_H

#include <stdbool.h>

#include "base/error.h"
#include "pipeline/pkgsource.h"

typedef struct rs_pkgtree {
    char *name;
    char *version;        /* NULL when unknown (an unpacked root without DEBIAN/control) */
    char *source;         /* its Source:, likewise */
    char *architecture;   /* its Architecture:, likewise */
    char *origin;         /* the .deb or the directory */
    const rs_pkgsource_ops *ops;
    void *state;          /* the source's own (a directory's fd, a .deb's index) */
    struct rs_known_node *known;   /* directories and symlinks already looked up */
    size_t known_cap, known_count;
} rs_pkgtree;

/* Opens origin as a package of the given kind. */
int rs_pkgtree_open_as(rs_pkgtree *t, const rs_pkgsource_ops *ops, const char *origin, rs_error *err);
void rs_pkgtree_free(rs_pkgtree *t);

/* Resolves `path` to the name of a regular file inside the package. */
int rs_pkgtree_resolve(rs_pkgtree *t, const char *path, char **resolved, rs_error *err);
/* Opens a resolved name again for reading (see rs_pkgsource_ops.reopen).
 * A symlink found on the way now was not there when it was resolved, and
 * is refused. */
int rs_pkgtree_open(const rs_pkgtree *t, const char *resolved, int *fd, rs_error *err);

/* The binary packages found in a directory: every entry a package source
 * claims (*.deb files, unpacked roots named after their package). */
typedef struct rs_pkgset {
    rs_pkgtree *trees;
    size_t count;
    char *dir;           /* where they were found, for errors */
    char *unreadable;    /* the first entry that could not be read, and why */
    size_t unreadable_count;
} rs_pkgset;

int rs_pkgset_scan(const char *dir, rs_pkgset *out, rs_error *err);
void rs_pkgset_free(rs_pkgset *s);
/* The one candidate for `name`: the only one present, or the only one at
 * `version` when several are. */
int rs_pkgset_choose(rs_pkgset *s, const char *name, const char *version, rs_pkgtree **out, rs_error *err);

#endif

/* The one walk over a directory tree: every entry below a root, depth
 * first, a directory before what it holds, names in sorted order (so a
 * tarball made from a walk has the same bytes every time), links not
 * followed. The visit gets a context, so no walk needs a global. */
#ifndef RS_WALK_H
#define RS_WALK_H

#include <stdbool.h>
#include <sys/stat.h>

#include "base/error.h"

/* Trees deeper than this are refused: a defence against a hostile tree
 * (a source-template inside a package) exhausting the stack. Debian's
 * deepest trees walked here (kernel module trees, source-templates) are
 * under 12 levels. */
#define RS_WALK_MAX_DEPTH 256

/* A visit returns 0 to go on, RS_WALK_SKIP not to enter this directory,
 * or -1 with err set to stop the walk. rel is the path below the root,
 * path the root joined with it; st is from lstat(). */
#define RS_WALK_SKIP 1
typedef int (*rs_walk_visit)(void *ctx, const char *rel, const char *path, const struct stat *st, rs_error *err);

typedef struct rs_walk_opts {
    bool skip_hidden;   /* leave out names starting with '.' (and what is below them) */
} rs_walk_opts;

/* Visits every entry below root (not root itself). opts may be NULL. */
int rs_walk_tree(const char *root, const rs_walk_opts *opts, rs_walk_visit visit, void *ctx, rs_error *err);

#endif

/* The one walk over a directory tree (walk.h). */
#include "base/walk.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/file.h"

typedef struct walk {
    const char *root;
    rs_walk_opts opts;
    rs_walk_visit visit;
    void *ctx;
} walk;

static bool left_out(const walk *w, const char *name)
{
    return !strcmp(name, ".") || !strcmp(name, "..") || (w->opts.skip_hidden && name[0] == '.');
}

static int walk_dir(const walk *w, const char *rel, unsigned depth, rs_error *err);

static int visit_entry(const walk *w, const char *rel, const char *name, unsigned depth, rs_error *err)
{
    _cleanup_free_ char *child = NULL, *path = NULL;
    struct stat st;
    int rc;

    if (asprintf(&child, "%s%s%s", rel, *rel ? "/" : "", name) < 0) {
        child = NULL;
        return rs_fail(err, "out of memory");
    }
    if (!(path = rs_path_join(w->root, child)))
        return rs_fail(err, "out of memory");
    if (lstat(path, &st) < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    if ((rc = w->visit(w->ctx, child, path, &st, err)) < 0)
        return -1;
    if (rc == RS_WALK_SKIP || !S_ISDIR(st.st_mode))
        return 0;
    return walk_dir(w, child, depth + 1, err);
}

static int walk_dir(const walk *w, const char *rel, unsigned depth, rs_error *err)
{
    _cleanup_free_ char *dir = NULL;
    struct dirent **names = NULL;
    int n, rc = 0;

    if (asprintf(&dir, "%s%s%s", w->root, *rel ? "/" : "", rel) < 0) {
        dir = NULL;
        return rs_fail(err, "out of memory");
    }
    if (depth > RS_WALK_MAX_DEPTH)
        return rs_fail(err, "%s: deeper than %d directories", dir, RS_WALK_MAX_DEPTH);
    if ((n = scandir(dir, &names, NULL, alphasort)) < 0)
        return rs_fail(err, "%s: %s", dir, strerror(errno));
    for (int i = 0; i < n; i++) {
        if (rc == 0 && !left_out(w, names[i]->d_name))
            rc = visit_entry(w, rel, names[i]->d_name, depth, err);
        free(names[i]);
    }
    free(names);
    return rc;
}

int rs_walk_tree(const char *root, const rs_walk_opts *opts, rs_walk_visit visit, void *ctx, rs_error *err)
{
    walk w = { root, { 0 }, visit, ctx };

    if (opts)
        w.opts = *opts;
    return walk_dir(&w, "", 0, err);
}

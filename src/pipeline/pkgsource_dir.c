/* An unpacked package root: a directory named after its package. Every
 * lookup and open is made beneath the directory's fd, opened once, so the
 * tree cannot be moved mid-run. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "pipeline/batch.h"
#include "pipeline/files_json.h"
#include "pipeline/pkgtree.h"

typedef struct dir_state {
    int root_fd;
} dir_state;

static int root_fd(const rs_pkgtree *t)
{
    return ((const dir_state *)t->state)->root_fd;
}

static bool dir_claims(const char *name, const struct stat *st)
{
    return S_ISDIR(st->st_mode) && rs_valid_package_name(name);
}

static int dir_open(rs_pkgtree *t, rs_error *err)
{
    const char *slash = strrchr(t->origin, '/');
    dir_state *s = calloc(1, sizeof(*s));

    if (!s)
        return rs_fail(err, "out of memory");
    t->state = s;
    if ((s->root_fd = open(t->origin, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        return rs_fail(err, "%s: %s", t->origin, strerror(errno));
    if (!(t->name = strdup(slash ? slash + 1 : t->origin)))
        return rs_fail(err, "out of memory");
    return 0;
}

static void dir_close(rs_pkgtree *t)
{
    dir_state *s = t->state;

    if (s && s->root_fd >= 0)
        close(s->root_fd);
    free(s);
    t->state = NULL;
}

static int dir_lookup(rs_pkgtree *t, const char *name, rs_node_type *type, char **link, rs_error *err)
{
    char target[PATH_MAX];
    struct stat st;
    ssize_t n;

    /* name has no symlinks above its last component: the walk resolved them. */
    if (fstatat(root_fd(t), name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT || errno == ENOTDIR ? 1 : rs_fail(err, "%s/%s: %s", t->origin, name, strerror(errno));
    if (S_ISREG(st.st_mode))
        *type = RS_NODE_FILE;
    else if (S_ISDIR(st.st_mode))
        *type = RS_NODE_DIR;
    else if (S_ISLNK(st.st_mode)) {
        *type = RS_NODE_SYMLINK;
        n = readlinkat(root_fd(t), name, target, sizeof(target) - 1);
        if (n < 0)
            return rs_fail(err, "%s/%s: %s", t->origin, name, strerror(errno));
        target[n] = '\0';
        if (!(*link = strdup(target)))
            return rs_fail(err, "out of memory");
    } else
        *type = RS_NODE_OTHER;
    return 0;
}

static int dir_reopen(const rs_pkgtree *t, const char *name, int *fd, rs_error *err)
{
    if (rs_open_beneath_no_symlinks(root_fd(t), t->origin, name, fd, err) < 0)
        return rs_error_prefix(err, "%s/%s: changed since it was resolved", t->origin, name);
    return 0;
}

typedef struct dir_read {
    rs_pkgtree *t;
    const rs_pkg_wanted *w;
    bool skip_unopened;   /* a name that does not open is passed over */
} dir_read;

static int read_one(void *ctx, size_t i, rs_error *err)
{
    dir_read *r = ctx;
    _cleanup_free_ char *label = NULL;
    rs_error not_opened;
    int fd;

    if (!(label = rs_path_join(r->t->origin, r->w->names[i])))
        return rs_fail(err, "out of memory");
    if (dir_reopen(r->t, r->w->names[i], &fd, r->skip_unopened ? &not_opened : err) < 0)
        return r->skip_unopened ? 0 : rs_error_prefix(err, "package %s", r->t->name);
    return r->w->take(r->w->ctx, r->w->names[i], label, fd, err) < 0 ? -1 : 0;
}

/* Every name that opens with no symlink on its way, before any is
 * resolved: that open is the resolution, so a tree without symlinks is
 * read in parallel from the start. The rest are resolved and read after. */
static int dir_read_as_named(rs_pkgtree *t, const rs_pkg_wanted *w, unsigned jobs, rs_error *err)
{
    dir_read r = { t, w, true };

    return rs_batch_run(w->n, jobs, read_one, &r, err);
}

/* Files of a directory open independently: one per job at once. */
static int dir_read_resolved(rs_pkgtree *t, const rs_pkg_wanted *w, unsigned jobs, rs_error *err)
{
    dir_read r = { t, w, false };

    return rs_batch_run(w->n, jobs, read_one, &r, err);
}

const rs_pkgsource_ops rs_pkgsource_dir = {
    .kind = "unpacked root",
    .claims = dir_claims,
    .open = dir_open,
    .lookup = dir_lookup,
    .read_as_named = dir_read_as_named,
    .named_is_resolved = true,
    .read_resolved = dir_read_resolved,
    .reopen = dir_reopen,
    .close = dir_close,
};

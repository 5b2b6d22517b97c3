/* A .deb read in place: its control fields name it, its data.tar is
 * listed once (an index, for lookups) and streamed for the wanted files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "pipeline/pkgtree.h"

typedef struct deb_state {
    bool indexed;
    rs_deb_index index;   /* read on the first walk, or on the first lookup */
} deb_state;

static deb_state *state(const rs_pkgtree *t)
{
    return t->state;
}

/* Made on first use, so a tree need not have been opened to be resolved
 * in (the fuzz target resolves in packages whose control is unreadable). */
static deb_state *ensure_state(rs_pkgtree *t, rs_error *err)
{
    if (!t->state && !(t->state = calloc(1, sizeof(deb_state))))
        rs_fail(err, "out of memory");
    return t->state;
}

static bool deb_claims(const char *name, const struct stat *st)
{
    return S_ISREG(st->st_mode) && rs_name_has_suffix(name, ".deb");
}

static int deb_open(rs_pkgtree *t, rs_error *err)
{
    rs_deb_control c;

    if (rs_deb_read_control(t->origin, &c, err) < 0)
        return rs_error_prefix(err, "%s", t->origin);
    t->name = TAKE_PTR(c.package);
    t->version = TAKE_PTR(c.version);
    t->source = TAKE_PTR(c.source);
    t->architecture = TAKE_PTR(c.architecture);
    rs_deb_control_free(&c);
    return 0;
}

static void deb_close(rs_pkgtree *t)
{
    if (t->state)
        rs_deb_index_free(&state(t)->index);
    free(t->state);
    t->state = NULL;
}

/* An early walk that stopped at its last wanted file listed only the
 * entries before it: a name not among them needs them all. */
static int index_for(rs_pkgtree *t, const char *name, rs_error *err)
{
    deb_state *s = ensure_state(t, err);

    if (!s)
        return -1;
    if (s->indexed && (rs_deb_index_find(&s->index, name) || s->index.complete))
        return 0;
    rs_deb_index_free(&s->index);
    if (rs_deb_index_read(t->origin, &s->index, err) < 0)
        return rs_error_prefix(err, "%s", t->origin);
    s->indexed = true;
    return 0;
}

static int deb_lookup(rs_pkgtree *t, const char *name, rs_node_type *type, char **link, rs_error *err)
{
    const rs_deb_entry *e;

    if (index_for(t, name, err) < 0)
        return -1;
    if (!(e = rs_deb_index_find(&state(t)->index, name))) {
        *type = RS_NODE_DIR;
        return rs_deb_index_has_beneath(&state(t)->index, name) ? 0 : 1;
    }
    *type = e->type;
    if (e->type == RS_NODE_HARDLINK) {
        /* A hard link names the entry holding the bytes. */
        const rs_deb_entry *target = rs_deb_index_find(&state(t)->index, e->link);

        *type = target && target->type == RS_NODE_FILE ? RS_NODE_FILE : RS_NODE_OTHER;
    }
    /* libarchive gives a symlink with an empty target no target at all;
     * such a link leads nowhere (Linux cannot even create one). */
    if (e->type == RS_NODE_SYMLINK && !e->link)
        return rs_fail(err, "%s: a symlink with an empty target", name);
    if (e->type == RS_NODE_SYMLINK && !(*link = strdup(e->link)))
        return rs_fail(err, "out of memory");
    return 0;
}

static const char *deb_bytes_of(const rs_pkgtree *t, const char *name)
{
    const rs_deb_entry *e = rs_deb_index_find(&state(t)->index, name);

    return e && e->type == RS_NODE_HARDLINK ? e->link : name;
}

/* A stream cannot be opened again: the signer then says why it cannot
 * do without the image. */
static int deb_reopen(const rs_pkgtree *t, const char *name, int *fd, rs_error *err)
{
    (void)t, (void)name, (void)err;
    *fd = -1;
    return 0;
}

typedef struct deb_read {
    const rs_pkgtree *t;
    const rs_pkg_wanted *w;
    size_t taken;                /* how many wanted names the walk has met */
} deb_read;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool wants(void *ctx, const char *name)
{
    const rs_pkg_wanted *w = ((deb_read *)ctx)->w;

    return bsearch(&name, w->names, w->n, sizeof(*w->names), cmp_str) != NULL;
}

/* After the last wanted file the rest of the package is not decoded (a
 * kernel image is the fifth of thousands of entries). */
static int take(void *ctx, const char *name, int fd, uint64_t size, rs_error *err)
{
    deb_read *r = ctx;
    _cleanup_free_ char *label = NULL;
    int rc;

    (void)size;
    if (asprintf(&label, "%s:%s", r->t->origin, name) < 0) {
        close(fd);
        return rs_fail(err, "out of memory");
    }
    if ((rc = r->w->take(r->w->ctx, name, label, fd, err)) < 0)
        return rc;
    return ++r->taken == r->w->n ? RS_DEB_STOP : rc;
}

/* The first walk lists the package's entries too: a compressed data.tar
 * is better decoded once. */
static int deb_read_as_named(rs_pkgtree *t, const rs_pkg_wanted *w, unsigned jobs, rs_error *err)
{
    deb_state *s = ensure_state(t, err);
    deb_read r = { t, w, 0 };
    int rc;

    (void)jobs;   /* one decoder */
    if (!s)
        return -1;
    if (s->indexed)
        rc = rs_deb_stream(t->origin, wants, take, &r, err);
    else if ((rc = rs_deb_stream_indexed(t->origin, &s->index, wants, take, &r, err)) == 0)
        s->indexed = true;
    return rc < 0 ? rs_error_prefix(err, "%s", t->origin) : 0;
}

/* One decoder walks the package: jobs cannot help it. */
static int deb_read_resolved(rs_pkgtree *t, const rs_pkg_wanted *w, unsigned jobs, rs_error *err)
{
    deb_read r = { t, w, 0 };

    (void)jobs;
    return rs_deb_stream(t->origin, wants, take, &r, err);
}

/* The .deb's own bytes: what a rebuilder attests. */
static int deb_container_sha256(const rs_pkgtree *t, uint8_t out[32], rs_error *err)
{
    if (rs_file_sha256(t->origin, out, NULL, err) < 0)
        return rs_error_prefix(err, "%s", t->origin);
    return 0;
}

const rs_pkgsource_ops rs_pkgsource_deb = {
    .kind = ".deb",
    .claims = deb_claims,
    .open = deb_open,
    .lookup = deb_lookup,
    .bytes_of = deb_bytes_of,
    .read_as_named = deb_read_as_named,
    .read_resolved = deb_read_resolved,
    .reopen = deb_reopen,
    .container_sha256 = deb_container_sha256,
    .close = deb_close,
};

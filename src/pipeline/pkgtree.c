#include "pipeline/pkgtree.h"

#include <assert.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"

#define MAX_SYMLINK_HOPS 40

/* A kernel lists a thousand modules in a few hundred directories: each
 * directory (or symlink) on the way is looked up once per tree, not once
 * per file below it. Files are not kept: each is named once. */
typedef struct rs_known_node {
    char *name;              /* NULL: free slot */
    rs_node_type type;       /* RS_NODE_DIR or RS_NODE_SYMLINK */
    char *link;              /* a symlink's target */
} known_node;

static size_t name_hash(const char *s)
{
    uint64_t h = 14695981039346656037ULL;   /* FNV-1a, 64-bit on every word size */

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (size_t)h;
}

/* The slot holding name, or the free slot where it belongs. */
static known_node *known_slot(known_node *table, size_t cap, const char *name)
{
    size_t i = name_hash(name) & (cap - 1);

    assert(table && cap);   /* known_add grows the table before it looks */
    while (table[i].name && strcmp(table[i].name, name) != 0)
        i = (i + 1) & (cap - 1);
    return &table[i];
}

static void known_free(rs_pkgtree *t)
{
    for (size_t i = 0; i < t->known_cap; i++) {
        free(t->known[i].name);
        free(t->known[i].link);
    }
    free(t->known);
}

/* Doubles the table, keeping it at most half full so probes stay short. */
static int known_grow(rs_pkgtree *t, rs_error *err)
{
    size_t cap = t->known_cap ? 2 * t->known_cap : 256;
    known_node *table = calloc(cap, sizeof(*table));

    if (!table)
        return rs_fail(err, "out of memory");
    for (size_t i = 0; t->known && i < t->known_cap; i++)
        if (t->known[i].name)
            *known_slot(table, cap, t->known[i].name) = t->known[i];
    free(t->known);
    t->known = table;
    t->known_cap = cap;
    return 0;
}

static int known_add(rs_pkgtree *t, const char *name, rs_node_type type, const char *link, rs_error *err)
{
    known_node *k;

    if (2 * (t->known_count + 1) > t->known_cap && known_grow(t, err) < 0)
        return -1;
    k = known_slot(t->known, t->known_cap, name);
    if (!(k->name = strdup(name)) || (link && !(k->link = strdup(link)))) {
        free(k->name);
        k->name = NULL;
        return rs_fail(err, "out of memory");
    }
    k->type = type;
    t->known_count++;
    return 0;
}

int rs_pkgtree_open_as(rs_pkgtree *t, const rs_pkgsource_ops *ops, const char *origin, rs_error *err)
{
    memset(t, 0, sizeof(*t));
    t->ops = ops;
    if (!(t->origin = strdup(origin)))
        return rs_fail(err, "out of memory");
    if (ops->open(t, err) < 0) {
        rs_pkgtree_free(t);
        return -1;
    }
    return 0;
}

void rs_pkgtree_free(rs_pkgtree *t)
{
    if (t->ops && t->ops->close)
        t->ops->close(t);
    known_free(t);
    free(t->name);
    free(t->version);
    free(t->source);
    free(t->architecture);
    free(t->origin);
    memset(t, 0, sizeof(*t));
}

static int lookup(rs_pkgtree *t, const char *name, rs_node_type *type, char **link, rs_error *err)
{
    known_node *k = t->known ? known_slot(t->known, t->known_cap, name) : NULL;
    int rc;

    *link = NULL;
    if (k && k->name) {
        *type = k->type;
        return k->link && !(*link = strdup(k->link)) ? rs_fail(err, "out of memory") : 0;
    }
    rc = t->ops->lookup(t, name, type, link, err);
    if (rc == 0 && (*type == RS_NODE_DIR || *type == RS_NODE_SYMLINK))
        return known_add(t, name, *type, *link, err);
    return rc;
}

/* Pending path components, consumed from the front; a symlink's target is
 * pushed in front of what remains. */
typedef struct walk {
    char *rest;
    char resolved[PATH_MAX];
    bool on_file;         /* the last step ended on a regular file */
} walk;

static int push_front(walk *w, const char *target, rs_error *err)
{
    char *joined;

    if (asprintf(&joined, "%s%s%s", target, *w->rest ? "/" : "", w->rest) < 0)
        return rs_fail(err, "out of memory");
    free(w->rest);
    w->rest = joined;
    return 0;
}

/* Takes the next component of w->rest into comp (empty when done). */
static void next_component(walk *w, char *comp, size_t cap)
{
    char *slash = strchr(w->rest, '/');
    size_t n = slash ? (size_t)(slash - w->rest) : strlen(w->rest);

    snprintf(comp, cap, "%.*s", (int)n, w->rest);
    memmove(w->rest, w->rest + n + (slash ? 1 : 0), strlen(w->rest + n + (slash ? 1 : 0)) + 1);
}

static int step_up(walk *w, const char *path, rs_error *err)
{
    char *slash = strrchr(w->resolved, '/');

    if (!w->resolved[0])
        return rs_fail(err, "%s resolves outside the package (through '..')", path);
    if (slash)
        *slash = '\0';
    else
        w->resolved[0] = '\0';
    return 0;
}

/* The link's target takes its place among the components still to walk. */
static int follow_link(walk *w, const char *candidate, const char *link, const char *path, int *hops,
                       rs_error *err)
{
    if (!link || !*link)
        return rs_fail(err, "%s: symlink %s has no target", path, candidate);
    if (++*hops > MAX_SYMLINK_HOPS)
        return rs_fail(err, "%s: too many levels of symbolic links", path);
    if (link[0] == '/')
        return rs_fail(err, "%s: symlink %s -> %s points outside the package", path, candidate, link);
    return push_front(w, link, err);
}

static int step(rs_pkgtree *t, walk *w, const char *comp, const char *path, int *hops, rs_error *err)
{
    _cleanup_free_ char *link = NULL;
    char candidate[PATH_MAX];
    rs_node_type type = RS_NODE_OTHER;
    int rc;

    w->on_file = false;
    if (!strcmp(comp, ".."))
        return step_up(w, path, err);
    if ((size_t)snprintf(candidate, sizeof(candidate), "%s%s%s", w->resolved, w->resolved[0] ? "/" : "", comp) >=
        sizeof(candidate))
        return rs_fail(err, "%s: path too long", path);
    if ((rc = lookup(t, candidate, &type, &link, err)) != 0)
        return rc < 0 ? -1 : rs_fail(err, "%s: not found in the package", path);
    if (type == RS_NODE_SYMLINK)
        return follow_link(w, candidate, link, path, hops, err);
    if (*w->rest && type != RS_NODE_DIR)
        return rs_fail(err, "%s: %s is not a directory", path, candidate);
    if (!*w->rest && type != RS_NODE_FILE)
        return rs_fail(err, "%s: not a regular file", path);
    memcpy(w->resolved, candidate, strlen(candidate) + 1);
    w->on_file = type == RS_NODE_FILE;
    return 0;
}

int rs_pkgtree_resolve(rs_pkgtree *t, const char *path, char **resolved, rs_error *err)
{
    walk w = { .rest = strdup(path) };
    char comp[NAME_MAX + 1];
    int hops = 0, rc = 0;

    if (!w.rest)
        return rs_fail(err, "out of memory");
    while (rc == 0 && *w.rest) {
        next_component(&w, comp, sizeof(comp));
        if (!comp[0] || !strcmp(comp, "."))
            continue;
        rc = step(t, &w, comp, path, &hops, err);
    }
    free(w.rest);
    if (rc < 0)
        return -1;
    /* A walk can also end on "..", or on a symlink to "." or to nothing,
     * where no step checked what it ended on. */
    if (!w.on_file)
        return rs_fail(err, "%s: not a regular file", path);
    *resolved = strdup(t->ops->bytes_of ? t->ops->bytes_of(t, w.resolved) : w.resolved);
    return *resolved ? 0 : rs_fail(err, "out of memory");
}

int rs_pkgtree_open(const rs_pkgtree *t, const char *resolved, int *fd, rs_error *err)
{
    return t->ops->reopen(t, resolved, fd, err);
}

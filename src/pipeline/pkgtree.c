#include "pipeline/pkgtree.h"

#include <dirent.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bytes.h"
#include "base/cleanup.h"
#include "base/file.h"
#include "pipeline/files_json.h"

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
    size_t h = 14695981039346656037ULL;   /* FNV-1a */

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
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

void rs_pkgtree_free(rs_pkgtree *t)
{
    known_free(t);
    free(t->name);
    free(t->version);
    free(t->source);
    free(t->origin);
    if (t->root_fd >= 0)
        close(t->root_fd);
    rs_deb_index_free(&t->index);
    memset(t, 0, sizeof(*t));
    t->root_fd = -1;
}

int rs_pkgtree_stream(rs_pkgtree *t, rs_deb_want want, rs_deb_take take, void *ctx, rs_error *err)
{
    int rc;

    if (t->indexed)
        rc = rs_deb_stream(t->origin, want, take, ctx, err);
    else if ((rc = rs_deb_stream_indexed(t->origin, &t->index, want, take, ctx, err)) == 0)
        t->indexed = true;
    return rc < 0 ? rs_error_prefix(err, "%s", t->origin) : 0;
}

/* What a name is inside the package; *link receives a symlink's target. */
static int lookup_deb(rs_pkgtree *t, const char *name, rs_node_type *type, char **link, rs_error *err)
{
    const rs_deb_entry *e;

    if (!t->indexed || (!rs_deb_index_find(&t->index, name) && !t->index.complete)) {
        /* An early walk that stopped at its last wanted file listed only
         * the entries before it: a name not among them needs them all. */
        rs_deb_index_free(&t->index);
        if (rs_deb_index_read(t->origin, &t->index, err) < 0)
            return rs_error_prefix(err, "%s", t->origin);
        t->indexed = true;
    }
    e = rs_deb_index_find(&t->index, name);
    if (!e) {
        /* Tarballs need not list parent directories explicitly. */
        size_t n = strlen(name);

        for (size_t i = 0; i < t->index.count; i++)
            if (!strncmp(t->index.entries[i].name, name, n) && t->index.entries[i].name[n] == '/') {
                *type = RS_NODE_DIR;
                return 0;
            }
        return 1;
    }
    *type = e->type;
    if (e->type == RS_NODE_HARDLINK) {
        /* A hard link names the entry holding the bytes. */
        const rs_deb_entry *target = rs_deb_index_find(&t->index, e->link);

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

static int lookup_dir(rs_pkgtree *t, const char *name, rs_node_type *type, char **link, rs_error *err)
{
    char target[PATH_MAX];
    struct stat st;
    ssize_t n;

    /* name has no symlinks above its last component: the walk resolved them. */
    if (fstatat(t->root_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT || errno == ENOTDIR ? 1 : rs_fail(err, "%s/%s: %s", t->origin, name, strerror(errno));
    if (S_ISREG(st.st_mode))
        *type = RS_NODE_FILE;
    else if (S_ISDIR(st.st_mode))
        *type = RS_NODE_DIR;
    else if (S_ISLNK(st.st_mode)) {
        *type = RS_NODE_SYMLINK;
        n = readlinkat(t->root_fd, name, target, sizeof(target) - 1);
        if (n < 0)
            return rs_fail(err, "%s/%s: %s", t->origin, name, strerror(errno));
        target[n] = '\0';
        if (!(*link = strdup(target)))
            return rs_fail(err, "out of memory");
    } else
        *type = RS_NODE_OTHER;
    return 0;
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
    rc = t->is_deb ? lookup_deb(t, name, type, link, err) : lookup_dir(t, name, type, link, err);
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

static int step(rs_pkgtree *t, walk *w, const char *comp, const char *path, int *hops, rs_error *err)
{
    _cleanup_free_ char *link = NULL;
    char candidate[PATH_MAX];
    rs_node_type type = RS_NODE_OTHER;
    int rc;

    w->on_file = false;
    if (!strcmp(comp, "..")) {
        char *slash = strrchr(w->resolved, '/');

        if (!w->resolved[0])
            return rs_fail(err, "%s resolves outside the package (through '..')", path);
        if (slash)
            *slash = '\0';
        else
            w->resolved[0] = '\0';
        return 0;
    }
    if ((size_t)snprintf(candidate, sizeof(candidate), "%s%s%s", w->resolved, w->resolved[0] ? "/" : "", comp) >=
        sizeof(candidate))
        return rs_fail(err, "%s: path too long", path);
    rc = lookup(t, candidate, &type, &link, err);
    if (rc < 0)
        return -1;
    if (rc > 0)
        return rs_fail(err, "%s: not found in the package", path);
    if (type == RS_NODE_SYMLINK) {
        if (!link || !*link)
            return rs_fail(err, "%s: symlink %s has no target", path, candidate);
        if (++*hops > MAX_SYMLINK_HOPS)
            return rs_fail(err, "%s: too many levels of symbolic links", path);
        if (link[0] == '/')
            return rs_fail(err, "%s: symlink %s -> %s points outside the package", path, candidate, link);
        return push_front(w, link, err);
    }
    if (*w->rest && type != RS_NODE_DIR)
        return rs_fail(err, "%s: %s is not a directory", path, candidate);
    if (!*w->rest && type != RS_NODE_FILE)
        return rs_fail(err, "%s: not a regular file", path);
    memcpy(w->resolved, candidate, strlen(candidate) + 1);
    w->on_file = type == RS_NODE_FILE;
    return 0;
}

/* A hard link in a tarball carries no bytes: they come with the entry it
 * names, which is what gets read. */
static const char *hardlink_target(const rs_pkgtree *t, const char *name)
{
    const rs_deb_entry *e = t->is_deb ? rs_deb_index_find(&t->index, name) : NULL;

    return e && e->type == RS_NODE_HARDLINK ? e->link : name;
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
    *resolved = strdup(hardlink_target(t, w.resolved));
    return *resolved ? 0 : rs_fail(err, "out of memory");
}

int rs_pkgtree_open(const rs_pkgtree *t, const char *resolved, int *fd, rs_error *err)
{
    if (t->is_deb)
        return rs_fail(err, "internal error: a .deb is read as a stream");
    if (rs_open_beneath_no_symlinks(t->root_fd, t->origin, resolved, fd, err) < 0)
        return rs_error_prefix(err, "%s/%s: changed since it was resolved", t->origin, resolved);
    return 0;
}

void rs_pkgset_free(rs_pkgset *s)
{
    for (size_t i = 0; i < s->count; i++)
        rs_pkgtree_free(&s->trees[i]);
    free(s->trees);
    memset(s, 0, sizeof(*s));
}

static int add_tree(rs_pkgset *s, rs_pkgtree *t, rs_error *err)
{
    rs_pkgtree *n = realloc(s->trees, (s->count + 1) * sizeof(*n));

    if (!n) {
        rs_pkgtree_free(t);
        return rs_fail(err, "out of memory");
    }
    s->trees = n;
    s->trees[s->count++] = *t;
    return 0;
}

static int scan_entry(rs_pkgset *s, const char *dir, const char *name, rs_error *err)
{
    rs_pkgtree t = { .root_fd = -1 };
    rs_deb_control c;
    struct stat st;
    size_t n = strlen(name);

    if (asprintf(&t.origin, "%s/%s", dir, name) < 0)
        return rs_fail(err, "out of memory");
    if (stat(t.origin, &st) < 0) {
        rs_pkgtree_free(&t);
        return 0;
    }
    if (S_ISREG(st.st_mode) && n > 4 && !strcmp(name + n - 4, ".deb")) {
        if (rs_deb_read_control(t.origin, &c, err) < 0) {
            rs_error_prefix(err, "%s", t.origin);
            rs_pkgtree_free(&t);
            return -1;
        }
        t.is_deb = true;
        t.name = TAKE_PTR(c.package);
        t.version = TAKE_PTR(c.version);
        t.source = TAKE_PTR(c.source);
        rs_deb_control_free(&c);
        return add_tree(s, &t, err);
    }
    if (S_ISDIR(st.st_mode) && rs_valid_package_name(name)) {
        if ((t.root_fd = open(t.origin, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
            rs_fail(err, "%s: %s", t.origin, strerror(errno));
            rs_pkgtree_free(&t);
            return -1;
        }
        if (!(t.name = strdup(name))) {
            rs_pkgtree_free(&t);
            return rs_fail(err, "out of memory");
        }
        return add_tree(s, &t, err);
    }
    rs_pkgtree_free(&t);
    return 0;
}

int rs_pkgset_scan(const char *dir, rs_pkgset *out, rs_error *err)
{
    struct dirent **names = NULL;
    int n = scandir(dir, &names, NULL, alphasort), rc = 0;

    memset(out, 0, sizeof(*out));
    if (n < 0)
        return rs_fail(err, "%s: %s", dir, strerror(errno));
    for (int i = 0; i < n; i++) {
        if (rc == 0 && names[i]->d_name[0] != '.')
            rc = scan_entry(out, dir, names[i]->d_name, err);
        free(names[i]);
    }
    free(names);
    if (rc < 0)
        rs_pkgset_free(out);
    return rc;
}

int rs_pkgset_choose(rs_pkgset *s, const char *name, const char *version, rs_pkgtree **out, rs_error *err)
{
    rs_pkgtree *only = NULL, *match = NULL;
    size_t count = 0, matches = 0;
    char found[512] = "";

    for (size_t i = 0; i < s->count; i++) {
        rs_pkgtree *t = &s->trees[i];
        size_t used = strlen(found);

        if (strcmp(t->name, name) != 0)
            continue;
        count++;
        only = t;
        snprintf(found + used, sizeof(found) - used, "%s%s", used ? ", " : "", t->version ? t->version : "(unpacked)");
        if (version && t->version && !strcmp(t->version, version)) {
            matches++;
            match = t;
        }
    }
    if (count == 0)
        return rs_fail(err, "package %s: not found among the packages", name);
    if (count == 1 && (!version || !only->version || !strcmp(only->version, version))) {
        *out = only;
        return 0;
    }
    if (matches == 1) {
        *out = match;
        return 0;
    }
    if (version)
        return rs_fail(err, "package %s: the template asks for version %s, found %s", name, version, found);
    return rs_fail(err, "package %s: ambiguous, several versions present (%s)", name, found);
}

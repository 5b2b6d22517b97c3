/* Phase A of sign-template: every listed file is read from its package
 * source, its path resolved, its type checked against files.json, its
 * embedded certificates against trusted_certs, and its digest taken; a
 * window of one package's items at a time, the packages side by side.
 * Nothing is signed before every item has passed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "pipeline/embedded_trust_check.h"
#include "pipeline/sign_job.h"

/* One package's items, sorted by the name they are read under (as
 * listed before resolving, as resolved after), and those names once each. */
typedef struct tree_pass {
    rs_sign_job *j;
    const rs_pkgtree *tree;
    const char *(*key)(const rs_sign_item *it);
    rs_sign_item **items;
    size_t n;
    const char **names;
    size_t n_names;
} tree_pass;

static const char *listed_path(const rs_sign_item *it)
{
    return it->path;
}

static const char *resolved_name(const rs_sign_item *it)
{
    return it->resolved;
}

static void tree_pass_free(tree_pass *p)
{
    free(p->items);
    free(p->names);
}

static int cmp_items(const void *a, const void *b, void *key)
{
    const char *(*name_of)(const rs_sign_item *it) = *(const char *(**)(const rs_sign_item *))key;

    return strcmp(name_of(*(rs_sign_item *const *)a), name_of(*(rs_sign_item *const *)b));
}

/* The window's items that are still without a digest (all of one
 * package, so of one tree). */
static int tree_pass_init(tree_pass *p, rs_sign_job *j, rs_sign_window *w,
                          const char *(*key)(const rs_sign_item *it), rs_error *err)
{
    size_t wanted = 0;

    *p = (tree_pass){ .j = j, .tree = w->items[0].tree, .key = key };
    for (size_t i = 0; i < w->n; i++)
        wanted += !w->items[i].format;
    if (!(p->items = calloc(wanted ? wanted : 1, sizeof(*p->items))) ||
        !(p->names = calloc(wanted ? wanted : 1, sizeof(*p->names))))
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < w->n; i++)
        if (!w->items[i].format)
            p->items[p->n++] = &w->items[i];
    qsort_r(p->items, p->n, sizeof(*p->items), cmp_items, &p->key);
    for (size_t i = 0; i < p->n; i++)
        if (i == 0 || strcmp(key(p->items[i - 1]), key(p->items[i])) != 0)
            p->names[p->n_names++] = key(p->items[i]);
    return 0;
}

/* The first of the items read under name; the others follow it. */
static size_t first_named(const tree_pass *p, const char *name)
{
    size_t lo = 0, hi = p->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (strcmp(p->key(p->items[mid]), name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int interrupted(rs_error *err)
{
    return rs_cancelled() ? rs_fail(err, "interrupted") : 0;
}

/* ---- before resolving: a .deb's files digested on the walk that lists it ---- */

/* Before any path is resolved, a .deb's data.tar is walked once to list
 * its entries, and every regular file named exactly as a files.json path
 * is digested on that same walk. Once paths are resolved, an item keeps
 * that digest only if its path resolved to itself (no symlink on the
 * way); any other item, or one whose early digest failed, is read again
 * after resolving, which also reports any error. */
static int take_as_named(void *ctx, const char *name, const char *label, int fd, rs_error *err)
{
    tree_pass *p = ctx;
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    rs_error ignored;

    if (rs_image_open_fd(&img, fd, label, &ignored) < 0)
        return 0;
    for (size_t i = first_named(p, name); i < p->n && !strcmp(p->items[i]->path, name); i++) {
        rs_sign_item *it = p->items[i];
        uint64_t before = rs_hashed_bytes();
        rs_digest d;

        if (strcmp(img.format->sig_type, rs_sig_type_name(it->rec.type)) ||
            img.format->digest(&img, p->j->o->sign.md, &d, &ignored) < 0 ||
            rs_sign_item_keep_digest(p->j, it, &d, &ignored) < 0)
            continue;
        if (rs_check_embedded_trust(&img, it->pkg, it->path, p->j->allowed, p->j->n_allowed, err) < 0)
            return -1;
        it->format = img.format;
        rs_progress_hashed(p->j->o->progress, rs_hashed_bytes() - before);
    }
    return interrupted(err);
}

/* ---- after resolving: every file not yet digested ---- */

static int digest_image(rs_sign_job *j, rs_sign_item *it, rs_image *img, rs_error *err)
{
    uint64_t before;
    rs_digest d;

    if (strcmp(img->format->sig_type, rs_sig_type_name(it->rec.type)) != 0)
        return rs_fail(err, "package %s: %s: declared %s, but the file is a %s file", it->pkg->name, it->path,
                       rs_sig_type_name(it->rec.type), img->format->name);
    if (rs_check_embedded_trust(img, it->pkg, it->path, j->allowed, j->n_allowed, err) < 0)
        return -1;
    before = rs_hashed_bytes();
    if (img->format->digest(img, j->o->sign.md, &d, err) < 0)
        return rs_error_prefix(err, "package %s: %s", it->pkg->name, it->path);
    if (rs_sign_item_keep_digest(j, it, &d, err) < 0)
        return -1;
    it->format = img->format;
    rs_progress_hashed(j->o->progress, rs_hashed_bytes() - before);
    return 0;
}

/* Every item naming this file (two paths may resolve to one). Calls for
 * different names may run at once: each touches only its own items. */
static int take_resolved(void *ctx, const char *name, const char *label, int fd, rs_error *err)
{
    tree_pass *p = ctx;
    _cleanup_image_ rs_image img = { .in.fd = -1 };

    if (rs_image_open_fd(&img, fd, label, err) < 0)
        return rs_error_prefix(err, "package %s", p->tree->name);
    for (size_t i = first_named(p, name); i < p->n && !strcmp(p->items[i]->resolved, name); i++)
        if (digest_image(p->j, p->items[i], &img, err) < 0)
            return -1;
    return interrupted(err);
}

/* ---- one window ---- */

/* Every file as named, where its source reads those nearly for free. */
static int read_window_as_named(rs_sign_job *j, rs_sign_window *w, unsigned jobs, rs_error *err)
{
    rs_pkgtree *tree = w->items[0].tree;
    tree_pass p;
    int rc;

    if (!tree->ops->read_as_named)
        return 0;
    if ((rc = tree_pass_init(&p, j, w, listed_path, err)) == 0 && p.n_names) {
        rs_pkg_wanted want = { p.names, p.n_names, take_as_named, &p };

        rc = tree->ops->read_as_named(tree, &want, jobs, err);
    }
    tree_pass_free(&p);
    return rc;
}

/* An item read as named from a source where that needs no resolving
 * (pkgsource.h) is resolved already: to its own path, which it shares.
 * Any other keeps an early digest only where its path resolved to the
 * file that was digested. */
int rs_sign_resolve_window(rs_sign_window *w, rs_error *err)
{
    for (size_t i = 0; i < w->n; i++) {
        rs_sign_item *it = &w->items[i];

        if (it->format && it->tree->ops->named_is_resolved)
            continue;
        if (rs_pkgtree_resolve(it->tree, it->path, &it->resolved, err) < 0)
            return rs_error_prefix(err, "package %s (%s)", it->pkg->name, it->tree->origin);
        if (it->format && strcmp(it->resolved, it->path) != 0)
            it->format = NULL;
    }
    return 0;
}

static int read_window_resolved(rs_sign_job *j, rs_sign_window *w, unsigned jobs, rs_error *err)
{
    rs_pkgtree *tree = w->items[0].tree;
    tree_pass p;
    int rc;

    if ((rc = tree_pass_init(&p, j, w, resolved_name, err)) == 0 && p.n_names) {
        rs_pkg_wanted want = { p.names, p.n_names, take_resolved, &p };

        rc = tree->ops->read_resolved(tree, &want, jobs, err);
    }
    tree_pass_free(&p);
    if (rc < 0)
        return -1;
    for (size_t i = 0; i < w->n; i++)
        if (!w->items[i].format)
            return rs_fail(err, "package %s: %s: not found in %s", w->items[i].pkg->name, w->items[i].path,
                           tree->origin);
    return 0;
}

typedef struct check_pass {
    rs_sign_job *j;
    unsigned jobs_each;   /* for a package that can read files side by side */
} check_pass;

/* One package's items, a window at a time: each window read as named,
 * resolved, the rest read as resolved, and kept. */
static int check_package(void *ctx, size_t p, rs_error *err)
{
    check_pass *c = ctx;
    rs_sign_job *j = c->j;
    _cleanup_(rs_sign_window_free) rs_sign_window w = { 0 };
    size_t end = j->pkg_first[p] + j->tpl.files.packages[p].n_files;

    for (size_t at = j->pkg_first[p]; at < end; at += j->window) {
        if (rs_sign_window_load(j, at, rs_sign_window_span(j, at, end), &w, err) < 0 ||
            read_window_as_named(j, &w, c->jobs_each, err) < 0 || rs_sign_resolve_window(&w, err) < 0 ||
            read_window_resolved(j, &w, c->jobs_each, err) < 0 || rs_sign_window_save(j, &w, err) < 0)
            return -1;
    }
    return 0;
}

/* The packages are read side by side (a kernel template's three are each
 * decoded only up to their image), one per core at most: each decoder
 * holds its dictionary, so more would cost memory, not time. The cores
 * left over go to the packages that can use them (an unpacked root opens
 * its files in parallel). */
int rs_sign_check_all(rs_sign_job *j, rs_error *err)
{
    size_t n_packages = j->tpl.files.n_packages;
    unsigned jobs = rs_default_jobs();
    check_pass c = { j, 1 };

    if (j->o->jobs && j->o->jobs < jobs)
        jobs = j->o->jobs;
    if (n_packages < jobs)
        c.jobs_each = jobs / (unsigned)n_packages;
    return rs_batch_run(n_packages, jobs, check_package, &c, err);
}

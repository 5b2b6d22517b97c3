/* `log monitor`: what a transparency log is for. Every signature the log
 * records for the archive (entries with a package and a signature_sha256)
 * must be carried by a published package, and every signature published
 * must be in the log. The monitor reads, under the archive directory:
 *
 *  - tarballs (*.tar.xz, .gz, .bz2, .zst), whose members ending in ".sig"
 *    are signature files (a -signed source package's debian/signatures/,
 *    the service's signatures.tar.gz), tarballs inside them too;
 *  - a 1.0-format source's .diff.gz, whose new files ending in ".sig"
 *    dpkg-source creates as they are;
 *  - binary packages (.deb, .udeb), which are what machines boot: every
 *    image in them that carries a signature by one of the service's
 *    certificates (of any format the format table knows, compressed or
 *    not) must have an entry for its image digest, from either face.
 *
 * Held (embargoed) requests are not in the exported log until they are
 * released, so they are never reported. */
#include "translog/monitor.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cleanup.h"
#include "base/walk.h"
#include "crypto/ossl.h"
#include "translog/log.h"
#include "translog/monitor_internal.h"
#include "translog/tiles.h"

int monitor_set_add(sig_set *s, const rs_hash *h, uint64_t index, rs_error *err)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        sig_ref *grown = realloc(s->h, cap * sizeof(*grown));

        if (!grown)
            return rs_fail(err, "out of memory");
        s->h = grown;
        s->cap = cap;
    }
    s->h[s->n++] = (sig_ref){ *h, index };
    return 0;
}

static int cmp_hash(const void *a, const void *b)
{
    return memcmp(a, b, RS_HASH_LEN);
}

static void set_sort(sig_set *s)
{
    if (s->n)   /* qsort's array may not be NULL, even empty */
        qsort(s->h, s->n, sizeof(sig_ref), cmp_hash);
}

bool monitor_set_has(const sig_set *s, const rs_hash *h)
{
    return s->n && bsearch(h, s->h, s->n, sizeof(sig_ref), cmp_hash) != NULL;
}

void monitor_digest_key(const char *digest, rs_hash *key)
{
    rs_sha256(digest, strlen(digest), key->b);
}

int monitor_published_sig(const monitor_walk *w, const char *file, const char *member, const uint8_t *data,
                          size_t len, rs_error *err)
{
    rs_monitor_report *r = w->report;
    rs_hash h;

    rs_sha256(data, len, h.b);
    if (monitor_set_add(w->published, &h, 0, err) < 0)
        return -1;
    if (!monitor_set_has(w->logged, &h)) {
        r->unlogged++;
        if (r->unlogged_fn)
            r->unlogged_fn(r->ctx, file, member);
    }
    return 0;
}

void monitor_unchecked(const monitor_walk *w, const char *file, const char *member, const char *why)
{
    w->report->unchecked++;
    if (w->report->unchecked_fn)
        w->report->unchecked_fn(w->report->ctx, file, member, why);
}

/* ---- the archive's side ---- */

static bool matches(const char *path, const char *const *patterns)
{
    for (; *patterns; patterns++)
        if (!fnmatch(*patterns, path, 0))
            return true;
    return false;
}

static int visit(void *ctx, const char *rel, const char *path, const struct stat *st, rs_error *err)
{
    static const char *const tarballs[] = { "*.tar.xz", "*.tar.gz", "*.tar.bz2", "*.tar.zst", NULL };
    static const char *const debs[] = { "*.deb", "*.udeb", NULL };
    static const char *const diffs[] = { "*.diff.gz", NULL };
    const monitor_walk *w = ctx;

    (void)rel;
    if (!S_ISREG(st->st_mode))
        return 0;
    if (matches(path, tarballs)) {
        w->report->tarballs++;
        return monitor_scan_tarball(w, path, err);
    }
    if (matches(path, diffs)) {
        w->report->diffs++;
        return monitor_scan_diff(w, path, err);
    }
    if (matches(path, debs)) {
        if (!w->service)
            return rs_fail(err, "%s: a binary package, and no --cert to know the service's signatures by", path);
        w->report->debs++;
        return monitor_scan_deb(w, path, err);
    }
    return 0;
}

/* ---- the log's side ---- */

/* An entry's signature hash (archive entries) and image digest (all). */
static int add_entry(json_t *e, uint64_t index, sig_set *logged, sig_set *digests, rs_monitor_report *r,
                     rs_error *err)
{
    const char *sig = json_string_value(json_object_get(e, "signature_sha256"));
    const char *digest = json_string_value(json_object_get(e, "signed_digest"));
    rs_hash h;

    if (digest) {
        monitor_digest_key(digest, &h);
        if (monitor_set_add(digests, &h, index, err) < 0)
            return -1;
    }
    if (sig && json_object_get(e, "package") && strlen(sig) == 2 * RS_HASH_LEN && rs_unhex(sig, h.b, RS_HASH_LEN) == 0)
        return monitor_set_add(logged, &h, index, err);
    r->not_archive++;
    return 0;
}

static int logged_entries(const char *dir, uint64_t size, sig_set *logged, sig_set *digests, rs_monitor_report *r,
                          rs_error *err)
{
    for (uint64_t b = 0; b * RS_TILE_WIDTH < size; b++) {
        unsigned w = rs_tile_width(size, RS_TILE_ENTRIES, b);
        size_t offs[RS_TILE_WIDTH], lens[RS_TILE_WIDTH];
        _cleanup_bytes_ rs_bytes data = { 0 };

        if (rs_tile_read_file(dir, RS_TILE_ENTRIES, b, w, &data, err) < 0 ||
            rs_bundle_split(data.data, data.len, w, offs, lens, err) < 0)
            return -1;
        for (unsigned i = 0; i < w; i++) {
            json_t *e = json_loadb((const char *)data.data + offs[i], lens[i], 0, NULL);
            int rc = add_entry(e, b * RS_TILE_WIDTH + i, logged, digests, r, err);

            json_decref(e);
            if (rc < 0)
                return -1;
        }
    }
    set_sort(logged);
    set_sort(digests);
    return 0;
}

/* The other way: logged signatures that nothing published carries. */
static void report_unpublished(const sig_set *logged, sig_set *published, rs_monitor_report *r)
{
    set_sort(published);
    r->published = published->n;
    for (size_t i = 0; i < logged->n; i++) {
        if (monitor_set_has(published, &logged->h[i].h))
            continue;
        r->unpublished++;
        if (r->unpublished_fn)
            r->unpublished_fn(r->ctx, logged->h[i].index, &logged->h[i].h);
    }
}

int rs_log_monitor(const char *dir, uint64_t size, const char *archive, const rs_trust *service, rs_monitor_report *r,
                   rs_error *err)
{
    sig_set logged = { 0 }, digests = { 0 }, published = { 0 };
    monitor_walk w = { &logged, &digests, &published, service, r };
    struct stat st;
    int rc;

    if (rs_archive_load(err) < 0 || logged_entries(dir, size, &logged, &digests, r, err) < 0)
        rc = -1;
    else if (stat(archive, &st) < 0)
        rc = rs_fail(err, "%s: %s", archive, strerror(errno));
    else if (S_ISDIR(st.st_mode))   /* the archive's tree, or one file named alone */
        rc = rs_walk_tree(archive, NULL, visit, &w, err);
    else
        rc = visit(&w, "", archive, &st, err);
    r->logged = logged.n;
    if (rc == 0)
        report_unpublished(&logged, &published, r);
    free(logged.h);
    free(digests.h);
    free(published.h);
    return rc;
}

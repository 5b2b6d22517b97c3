/* `log monitor`: what a transparency log is for. Every signature the log
 * records for the archive (entries with a package and a signature_sha256)
 * must be carried by a published -signed package, and every signature a
 * published package carries must be in the log. Published packages are
 * found under the archive directory as source tarballs (*.tar.xz, .gz,
 * .bz2, .zst) whose members ending in ".sig" are signatures: in a -signed
 * source package under debian/signatures/, in the service's
 * signatures.tar.gz at the top. Held (embargoed) requests are not in the
 * exported log until they are released, so they are never reported. */
#include "translog/monitor.h"

#include <errno.h>
#include <fnmatch.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "archive/archive_lib.h"
#include "base/cleanup.h"
#include "base/walk.h"
#include "crypto/ossl.h"
#include "translog/log.h"
#include "translog/tiles.h"

/* A published signature: a CMS or detached signature, a few KiB. */
#define MAX_SIG_MEMBER (1024 * 1024)

typedef struct sig_ref {
    rs_hash h;
    uint64_t index;    /* the log entry's; unused for published ones */
} sig_ref;

typedef struct sig_set {
    sig_ref *h;
    size_t n, cap;
} sig_set;

static int set_add(sig_set *s, const rs_hash *h, uint64_t index, rs_error *err)
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

static bool set_has(const sig_set *s, const rs_hash *h)
{
    return s->n && bsearch(h, s->h, s->n, sizeof(sig_ref), cmp_hash) != NULL;
}

/* ---- the archive's side ---- */

/* What the walk over the archive carries. */
typedef struct archive_walk {
    const sig_set *logged;   /* sorted */
    sig_set *published;
    rs_monitor_report *report;
} archive_walk;

static int read_member(struct archive *a, const char *tar, const char *name, rs_hash *out, rs_error *err)
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    char buf[16384];
    size_t total = 0;
    la_ssize_t got;

    if (!md || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(md);
        return rs_fail(err, "out of memory");
    }
    while ((got = sym_archive_read_data(a, buf, sizeof(buf))) > 0 && (total += (size_t)got) <= MAX_SIG_MEMBER)
        EVP_DigestUpdate(md, buf, (size_t)got);
    EVP_DigestFinal_ex(md, out->b, NULL);
    EVP_MD_CTX_free(md);
    if (got < 0)
        return rs_fail(err, "%s: %s: %s", tar, name, sym_archive_error_string(a));
    if (total > MAX_SIG_MEMBER)
        return rs_fail(err, "%s: %s: a signature over the limit of %d bytes", tar, name, MAX_SIG_MEMBER);
    return 0;
}

static int scan_tarball(const char *path, const archive_walk *w, rs_error *err)
{
    rs_monitor_report *r = w->report;
    struct archive *a = sym_archive_read_new();
    struct archive_entry *e;
    int rc = 0;

    if (!a)
        return rs_fail(err, "out of memory");
    sym_archive_read_support_filter_xz(a);
    sym_archive_read_support_filter_gzip(a);
    sym_archive_read_support_filter_bzip2(a);
    sym_archive_read_support_filter_zstd(a);
    sym_archive_read_support_format_tar(a);
    if (sym_archive_read_open_filename(a, path, 65536) != ARCHIVE_OK) {
        rc = rs_fail(err, "%s: %s", path, sym_archive_error_string(a));
        goto out;
    }
    while (rc == 0 && sym_archive_read_next_header(a, &e) == ARCHIVE_OK) {
        const char *name = sym_archive_entry_pathname(e);
        size_t len = name ? strlen(name) : 0;
        rs_hash h;

        if (len < 4 || strcmp(name + len - 4, ".sig") || sym_archive_entry_filetype(e) != AE_IFREG)
            continue;
        if ((rc = read_member(a, path, name, &h, err)) == 0 && (rc = set_add(w->published, &h, 0, err)) == 0 &&
            !set_has(w->logged, &h)) {
            r->unlogged++;
            if (r->unlogged_fn)
                r->unlogged_fn(r->ctx, path, name);
        }
    }
out:
    sym_archive_read_free(a);
    return rc;
}

static int visit(void *ctx, const char *rel, const char *path, const struct stat *st, rs_error *err)
{
    archive_walk *w = ctx;

    (void)rel;
    if (!S_ISREG(st->st_mode) || (fnmatch("*.tar.xz", path, 0) && fnmatch("*.tar.gz", path, 0) &&
                                  fnmatch("*.tar.bz2", path, 0) && fnmatch("*.tar.zst", path, 0)))
        return 0;
    w->report->tarballs++;
    return scan_tarball(path, w, err);
}

/* ---- the log's side ---- */

static int logged_entries(const char *dir, uint64_t size, sig_set *logged, rs_monitor_report *r, rs_error *err)
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
            const char *sig = json_string_value(json_object_get(e, "signature_sha256"));
            rs_hash h;
            int rc = 0;

            if (sig && json_object_get(e, "package") && strlen(sig) == 2 * RS_HASH_LEN &&
                rs_unhex(sig, h.b, RS_HASH_LEN) == 0)
                rc = set_add(logged, &h, b * RS_TILE_WIDTH + i, err);
            else
                r->not_archive++;
            json_decref(e);
            if (rc < 0)
                return -1;
        }
    }
    if (logged->n)   /* qsort's array may not be NULL, even empty */
        qsort(logged->h, logged->n, sizeof(sig_ref), cmp_hash);
    return 0;
}

int rs_log_monitor(const char *dir, uint64_t size, const char *archive, rs_monitor_report *r, rs_error *err)
{
    sig_set logged = { 0 }, published = { 0 };
    archive_walk w = { &logged, &published, r };
    struct stat st;
    int rc;

    if (rs_archive_load(err) < 0 || logged_entries(dir, size, &logged, r, err) < 0) {
        free(logged.h);
        return -1;
    }
    r->logged = logged.n;
    /* The archive's tree, or one tarball named alone. */
    if (stat(archive, &st) < 0)
        rc = rs_fail(err, "%s: %s", archive, strerror(errno));
    else if (S_ISDIR(st.st_mode))
        rc = rs_walk_tree(archive, NULL, visit, &w, err);
    else
        rc = visit(&w, "", archive, &st, err);
    if (rc == 0) {
        /* The other way: logged signatures that nothing published carries. */
        if (published.n)
            qsort(published.h, published.n, sizeof(sig_ref), cmp_hash);
        r->published = published.n;
        for (size_t i = 0; i < logged.n; i++) {
            if (set_has(&published, &logged.h[i].h))
                continue;
            r->unpublished++;
            if (r->unpublished_fn)
                r->unpublished_fn(r->ctx, logged.h[i].index, &logged.h[i].h);
        }
    }
    free(logged.h);
    free(published.h);
    return rc;
}

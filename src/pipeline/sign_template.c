#include "pipeline/sign_template.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <libgen.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "base/spawn.h"
#include "crypto/ossl.h"
#include "ops/offline.h"
#include "ops/ops.h"
#include "pipeline/batch.h"
#include "pipeline/embedded_trust_check.h"
#include "pipeline/pkgtree.h"
#include "pipeline/source_binding.h"
#include "pipeline/source_tree.h"
#include "pipeline/tarball.h"
#include "pipeline/template.h"

#define MAX_ALLOWLIST (1024 * 1024)

/* One file to sign. */
typedef struct item {
    const rs_sign_package *pkg;
    const rs_sign_file *file;
    rs_pkgtree *tree;
    char *resolved;              /* name inside the package */
    char *sig_name;              /* package/path.sig, below signatures/ */
    const rs_format *format;     /* detected in phase A */
    rs_digest digest;
    uint64_t size;
    rs_bytes sig;
    unsigned char sig_sha256[SHA256_DIGEST_LENGTH];
} item;

typedef struct job {
    const rs_sign_template_options *o;
    rs_template tpl;
    rs_pkgset inputs;
    item *items;
    size_t n_items;
    item **by_name;              /* the items in signatures.tar.xz order */
    char *work;                  /* the hidden directory that becomes OUTDIR */
    char *sigdir;                /* work/signatures */
    char *source_tree;           /* work/<source>-<version>, when the template has one */
    time_t mtime;                /* of every file in the outputs */
    rs_tarball_feed *feed;       /* writes signatures.tar.xz */
    char **allowed;              /* the allowlist's fingerprints */
    size_t n_allowed;
} job;

static void job_free(job *j)
{
    for (size_t i = 0; i < j->n_items; i++) {
        free(j->items[i].resolved);
        free(j->items[i].sig_name);
        rs_bytes_free(&j->items[i].sig);
    }
    free(j->items);
    free(j->by_name);
    for (size_t a = 0; a < j->n_allowed; a++)
        free(j->allowed[a]);
    free(j->allowed);
    rs_pkgset_free(&j->inputs);
    rs_template_free(&j->tpl);
    free(j->work);
    free(j->sigdir);
    free(j->source_tree);
}

/* ---- refusals that need no file contents ---- */

static int load_allowlist(const char *path, char ***out, size_t *n, rs_error *err)
{
    _cleanup_bytes_ rs_bytes buf = { 0 };
    char *line, *save = NULL;

    *out = NULL;
    *n = 0;
    if (!path)
        return 0;
    if (rs_read_file(path, MAX_ALLOWLIST, &buf, err) < 0 || rs_bytes_append(&buf, "", 1, err) < 0)
        return rs_error_prefix(err, "%s", path);
    for (line = strtok_r((char *)buf.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        uint8_t raw[32];
        char hex[65], **grown;

        line[strcspn(line, "#")] = '\0';
        line += strspn(line, " \t");
        line[strcspn(line, " \t\r")] = '\0';
        if (!*line)
            continue;
        if (rs_unhex(line, raw, sizeof(raw)) < 0)
            return rs_fail(err, "%s: '%s' is not a SHA-256 fingerprint", path, line);
        rs_hex(raw, sizeof(raw), hex);
        /* Stored at once: realloc may have freed the old array, and the
         * caller frees whatever *out holds when this fails. */
        if (!(grown = realloc(*out, (*n + 1) * sizeof(char *))))
            return rs_fail(err, "out of memory");
        *out = grown;
        if (!(grown[*n] = strdup(hex)))
            return rs_fail(err, "out of memory");
        (*n)++;
    }
    return 0;
}

/* Production signatures must never vouch for code that trusts keys the
 * service does not know: every trusted_certs entry must be allowed. */
static int check_trusted_certs(job *j, rs_error *err)
{
    int rc = load_allowlist(j->o->allowlist, &j->allowed, &j->n_allowed, err);

    for (size_t p = 0; rc == 0 && p < j->tpl.files.n_packages; p++) {
        const rs_sign_package *pkg = &j->tpl.files.packages[p];

        for (size_t c = 0; rc == 0 && c < pkg->n_trusted_certs; c++) {
            bool ok = false;

            for (size_t a = 0; a < j->n_allowed; a++)
                ok |= !strcmp(j->allowed[a], pkg->trusted_certs[c]);
            if (!ok)
                rc = rs_fail(err, "package %s: trusted certificate %s is not on the allowlist", pkg->name,
                             pkg->trusted_certs[c]);
        }
    }
    return rc;
}

static int make_items(job *j, rs_error *err)
{
    size_t total = 0;

    for (size_t p = 0; p < j->tpl.files.n_packages; p++)
        total += j->tpl.files.packages[p].n_files;
    if (total == 0)
        return rs_fail(err, "the template lists no files to sign");
    j->items = calloc(total, sizeof(*j->items));
    if (!j->items)
        return rs_fail(err, "out of memory");
    for (size_t p = 0; p < j->tpl.files.n_packages; p++) {
        const rs_sign_package *pkg = &j->tpl.files.packages[p];
        _cleanup_free_ char *pinned = NULL;
        const char *want = rs_template_wanted_version(&j->tpl, pkg->name, &pinned);
        rs_pkgtree *tree;

        if (rs_pkgset_choose(&j->inputs, pkg->name, want, &tree, err) < 0 ||
            rs_check_source_binding(j->tpl.source, pkg->name, tree, &j->o->foreign_sources, err) < 0)
            return -1;
        for (size_t f = 0; f < pkg->n_files; f++) {
            item *it = &j->items[j->n_items++];

            *it = (item){ .pkg = pkg, .file = &pkg->files[f], .tree = tree };
            if (asprintf(&it->sig_name, "%s/%s.sig", pkg->name, pkg->files[f].path) < 0) {
                it->sig_name = NULL;
                return rs_fail(err, "out of memory");
            }
        }
    }
    rs_progress_total(j->o->progress, j->n_items);
    return 0;
}

static int resolve_items(job *j, rs_error *err)
{
    for (size_t i = 0; i < j->n_items; i++) {
        item *it = &j->items[i];

        if (rs_pkgtree_resolve(it->tree, it->file->path, &it->resolved, err) < 0)
            return rs_error_prefix(err, "package %s (%s)", it->pkg->name, it->tree->origin);
    }
    return 0;
}

static int cmp_sig_name(const void *a, const void *b)
{
    return rs_tarball_path_cmp((*(item *const *)a)->sig_name, (*(item *const *)b)->sig_name);
}

/* Sorted, two signatures that would land on one path, or a signature
 * where another needs a directory, are next to each other. */
static int order_items(job *j, rs_error *err)
{
    if (!(j->by_name = calloc(j->n_items, sizeof(*j->by_name))))
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < j->n_items; i++)
        j->by_name[i] = &j->items[i];
    qsort(j->by_name, j->n_items, sizeof(*j->by_name), cmp_sig_name);
    for (size_t i = 1; i < j->n_items; i++) {
        const item *a = j->by_name[i - 1], *b = j->by_name[i];
        size_t n = strlen(a->sig_name);

        if (!strcmp(a->sig_name, b->sig_name))
            return rs_fail(err, "package %s: %s is listed twice", a->pkg->name, a->file->path);
        if (!strncmp(a->sig_name, b->sig_name, n) && b->sig_name[n] == '/')
            return rs_fail(err, "package %s: %s.sig would be both the signature of %s and a directory above %s's",
                           a->pkg->name, a->file->path, a->file->path, b->file->path);
    }
    return 0;
}

/* ---- phase A: open every file, check its type, digest it ---- */

static int digest_image(job *j, item *it, rs_image *img, rs_error *err)
{
    if (strcmp(img->format->sig_type, rs_sig_type_name(it->file->type)) != 0)
        return rs_fail(err, "package %s: %s: declared %s, but the file is a %s file", it->pkg->name, it->file->path,
                       rs_sig_type_name(it->file->type), img->format->name);
    if (rs_check_embedded_trust(img, it->pkg, it->file->path, j->allowed, j->n_allowed, err) < 0)
        return -1;
    if (img->format->digest(img, j->o->sign.md, &it->digest, err) < 0)
        return rs_error_prefix(err, "package %s: %s", it->pkg->name, it->file->path);
    it->format = img->format;
    it->size = img->in.size;
    rs_progress_hashed(j->o->progress, it->size);
    return 0;
}

static int digest_from_dir(void *ctx, size_t i, rs_error *err)
{
    job *j = ctx;
    item *it = &j->items[i];
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    _cleanup_free_ char *path = NULL;
    int fd;

    if (it->tree->is_deb)
        return 0;
    if (asprintf(&path, "%s/%s", it->tree->origin, it->resolved) < 0)
        return rs_fail(err, "out of memory");
    if (rs_pkgtree_open(it->tree, it->resolved, &fd, err) < 0 || rs_image_open_fd(&img, fd, path, err) < 0)
        return rs_error_prefix(err, "package %s", it->pkg->name);
    return digest_image(j, it, &img, err);
}

typedef struct deb_pass {
    job *j;
    rs_pkgtree *tree;
} deb_pass;

static bool deb_wants(void *ctx, const char *name)
{
    deb_pass *d = ctx;

    for (size_t i = 0; i < d->j->n_items; i++)
        if (d->j->items[i].tree == d->tree && !d->j->items[i].format && !strcmp(d->j->items[i].resolved, name))
            return true;
    return false;
}

/* Every item naming this entry (two paths may resolve to one file). */
static int deb_take(void *ctx, const char *name, int fd, uint64_t size, rs_error *err)
{
    deb_pass *d = ctx;
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    _cleanup_free_ char *label = NULL;

    (void)size;
    if (asprintf(&label, "%s:%s", d->tree->origin, name) < 0) {
        close(fd);
        return rs_fail(err, "out of memory");
    }
    if (rs_image_open_fd(&img, fd, label, err) < 0)
        return -1;
    for (size_t i = 0; i < d->j->n_items; i++) {
        item *it = &d->j->items[i];

        if (it->tree == d->tree && !it->format && !strcmp(it->resolved, name) && digest_image(d->j, it, &img, err) < 0)
            return -1;
    }
    return rs_cancelled() ? rs_fail(err, "interrupted") : 0;
}

/* ---- .deb packages: digested on the walk that lists them ---- */

/* Before any path is resolved, a .deb's data.tar is walked once to list
 * its entries, and every regular file named exactly as a files.json path
 * is digested on that same walk. Once paths are resolved, an item keeps
 * that digest only if its path resolved to itself (no symlink on the
 * way); any other item, or one whose early digest failed, is read again
 * in phase A, which also reports any error. Nothing is signed before
 * phase A has checked every item. */
typedef struct early_pass {
    job *j;
    rs_pkgtree *tree;
    const char **names;          /* the tree's files.json paths, sorted */
    size_t n;
    size_t taken;                /* how many of them the walk has met */
} early_pass;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool early_wants(void *ctx, const char *name)
{
    early_pass *e = ctx;

    return bsearch(&name, e->names, e->n, sizeof(*e->names), cmp_str) != NULL;
}

static int early_take(void *ctx, const char *name, int fd, uint64_t size, rs_error *err)
{
    early_pass *e = ctx;
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    rs_error ignored;

    (void)size;
    /* After the last wanted file the rest of the package is not decoded
     * (a kernel image is the fifth of thousands of entries). */
    int done = ++e->taken == e->n ? RS_DEB_STOP : 0;

    if (rs_image_open_fd(&img, fd, name, &ignored) < 0)
        return done;
    for (size_t i = 0; i < e->j->n_items; i++) {
        item *it = &e->j->items[i];

        if (it->tree != e->tree || strcmp(it->file->path, name) ||
            strcmp(img.format->sig_type, rs_sig_type_name(it->file->type)) ||
            img.format->digest(&img, e->j->o->sign.md, &it->digest, &ignored) < 0)
            continue;
        if (rs_check_embedded_trust(&img, it->pkg, it->file->path, e->j->allowed, e->j->n_allowed, err) < 0)
            return -1;
        it->format = img.format;
        it->size = img.in.size;
        rs_progress_hashed(e->j->o->progress, it->size);
    }
    return rs_cancelled() ? rs_fail(err, "interrupted") : done;
}

static int digest_deb_early(job *j, rs_pkgtree *tree, rs_error *err)
{
    early_pass e = { j, tree, calloc(j->n_items, sizeof(char *)), 0, 0 };
    int rc;

    if (!e.names)
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < j->n_items; i++)
        if (j->items[i].tree == tree)
            e.names[e.n++] = j->items[i].file->path;
    qsort(e.names, e.n, sizeof(*e.names), cmp_str);
    rc = e.n ? rs_pkgtree_stream(tree, early_wants, early_take, &e, err) : 0;
    free(e.names);
    return rc;
}

static int digest_deb_early_at(void *ctx, size_t t, rs_error *err)
{
    job *j = ctx;

    return j->inputs.trees[t].is_deb ? digest_deb_early(j, &j->inputs.trees[t], err) : 0;
}

/* The packages are decompressed side by side (a kernel template's three
 * are each decoded only up to their image), one per core at most: each
 * decoder holds its dictionary, so more would cost memory, not time. */
static int digest_debs_early(job *j, rs_error *err)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned jobs = cores > 0 ? (unsigned)cores : 1;

    if (j->o->jobs && j->o->jobs < jobs)
        jobs = j->o->jobs;
    return rs_batch_run(j->inputs.count, jobs, digest_deb_early_at, j, err);
}

/* Keeps an early digest only where the path resolved to the file that
 * was digested. */
static void keep_early_digests(job *j)
{
    for (size_t i = 0; i < j->n_items; i++) {
        item *it = &j->items[i];

        if (it->format && strcmp(it->resolved, it->file->path) != 0)
            it->format = NULL;
    }
}

static int digest_all(job *j, rs_error *err)
{
    keep_early_digests(j);
    for (size_t t = 0; t < j->inputs.count; t++) {
        deb_pass d = { j, &j->inputs.trees[t] };
        bool used = false;

        for (size_t i = 0; i < j->n_items; i++)
            used |= j->items[i].tree == d.tree && !j->items[i].format;
        if (used && d.tree->is_deb && rs_deb_stream(d.tree->origin, deb_wants, deb_take, &d, err) < 0)
            return -1;
    }
    if (rs_batch_run(j->n_items, j->o->jobs, digest_from_dir, j, err) < 0)
        return -1;
    for (size_t i = 0; i < j->n_items; i++)
        if (!j->items[i].format)
            return rs_fail(err, "package %s: %s: not found in %s", j->items[i].pkg->name, j->items[i].file->path,
                           j->items[i].tree->origin);
    return 0;
}

/* ---- phase B: sign every digest, write the signature tree ---- */

static int write_sig(const char *base, const item *it, rs_error *err)
{
    _cleanup_free_ char *path = NULL;

    if (asprintf(&path, "%s/%s", base, it->sig_name) < 0)
        return rs_fail(err, "out of memory");
    return rs_write_new_file(path, it->sig.data, it->sig.len, 0644, err);
}

/* debian/signatures/ of the source tree: the files of signatures/, linked. */
static int link_sig(const job *j, const char *base, const item *it, rs_error *err)
{
    _cleanup_free_ char *from = NULL, *to = NULL;

    if (asprintf(&from, "%s/%s", j->sigdir, it->sig_name) < 0 || asprintf(&to, "%s/%s", base, it->sig_name) < 0)
        return rs_fail(err, "out of memory");
    if (rs_mkdir_parents(to, err) < 0)
        return -1;
    return link(from, to) < 0 ? rs_fail(err, "%s: %s", to, strerror(errno)) : 0;
}

/* The image again, for a signer that must read it (a module through the
 * service); -1 when the signer needs none, or when it sits inside a .deb
 * (the signer then says why it cannot do without). */
static int reopen_for_signer(const job *j, const item *it, int *fd, rs_error *err)
{
    *fd = -1;
    if (!rs_image_signer_wants_image(j->o->signers[it->file->type], it->format) || it->tree->is_deb)
        return 0;
    return rs_pkgtree_open(it->tree, it->resolved, fd, err);
}

/* Item k in tarball order, so the tarball's writer rarely waits. */
static int sign_one(void *ctx, size_t k, rs_error *err)
{
    job *j = ctx;
    item *it = j->by_name[k];
    _cleanup_free_ char *name = NULL;
    _cleanup_close_ int image_fd = -1;

    if (asprintf(&name, "%s/%s", it->pkg->name, it->file->path) < 0)
        return rs_fail(err, "out of memory");
    if (reopen_for_signer(j, it, &image_fd, err) < 0 ||
        rs_image_signer_sign(j->o->signers[it->file->type], it->format, &it->digest, &j->o->sign, name, image_fd,
                             &it->sig, err) < 0)
        return rs_error_prefix(err, "package %s: %s", it->pkg->name, it->file->path);
    rs_sha256(it->sig.data, it->sig.len, it->sig_sha256);
    if (write_sig(j->sigdir, it, err) < 0)
        return -1;
    rs_tarball_feed_ready(j->feed, k);
    rs_progress_signed(j->o->progress);
    return 0;
}

static void tar_entry(void *ctx, size_t k, const char **path, const void **data, size_t *len)
{
    job *j = ctx;
    const item *it = j->by_name[k];

    /* The writer asks for entry k once k-1 is in the tarball: its bytes
     * are on disk in signatures/ too, so memory stays flat in the number
     * of files. */
    if (k > 0)
        rs_bytes_free(&j->by_name[k - 1]->sig);

    *path = it->sig_name;
    *data = it->sig.data;
    *len = it->sig.len;
}

/* signatures.tar.xz is written from memory while signing goes on, rather
 * than read back from the tree and compressed after it. Its writer starts
 * before phase A, so loading libarchive happens meanwhile too. */
static int start_tarball(job *j, rs_error *err)
{
    _cleanup_free_ char *tarball = NULL;

    if (asprintf(&tarball, "%s/signatures.tar.xz", j->work) < 0)
        return rs_fail(err, "out of memory");
    return rs_tarball_feed_start(&j->feed, tarball, j->mtime, j->n_items, tar_entry, j, err);
}

static int sign_all(job *j, rs_error *err)
{
    int rc;

    for (size_t i = 0; i < j->n_items; i++)
        if (!j->o->signers[j->items[i].file->type])
            return rs_fail(err, "package %s: %s: no key is given for sig_type %s", j->items[i].pkg->name,
                           j->items[i].file->path, rs_sig_type_name(j->items[i].file->type));

    rc = rs_batch_run(j->n_items, j->o->jobs, sign_one, j, err);
    if (rc == 0 && rs_tarball_feed_finish(j->feed, err) < 0)
        rc = rs_error_prefix(err, "%s/signatures.tar.xz", j->work);
    return rc;
}

/* ---- outputs ---- */

/* The digest the key itself signed, for the log: the image digest where
 * the key signs that directly (modules), else the signed attributes'
 * digest, rebuilt as the signature was (ops/offline.h). */
static int key_signed_digest(const job *j, const item *it, char out[RS_DIGEST_STR], rs_error *err)
{
    _cleanup_(rs_offline_request_free) rs_offline_request r = { 0 };

    if (it->format->key_signs_image_digest) {
        rs_digest_format(&it->digest, out, RS_DIGEST_STR);
        return 0;
    }
    if (rs_offline_prepare_digest(it->format, &it->digest, j->o->signers[it->file->type]->cert, NULL, &j->o->sign,
                                  &r, err) < 0)
        return rs_error_prefix(err, "package %s: %s", it->pkg->name, it->file->path);
    rs_digest_format(&r.tbs, out, RS_DIGEST_STR);
    return 0;
}

/* One file's entry, as JSON_INDENT(2) puts it inside "files": [...]. */
static int write_manifest_entry(FILE *f, const job *j, const item *it, bool last, rs_error *err)
{
    char digest[RS_DIGEST_STR], tbs[RS_DIGEST_STR], sig[2 * SHA256_DIGEST_LENGTH + 1], fpr[65];
    _cleanup_free_ char *text = NULL;
    json_auto_t *o = NULL;

    if (key_signed_digest(j, it, tbs, err) < 0)
        return -1;
    rs_x509_fingerprint(j->o->signers[it->file->type]->cert, fpr);
    rs_digest_format(&it->digest, digest, sizeof(digest));
    rs_hex(it->sig_sha256, sizeof(it->sig_sha256), sig);
    o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "package", it->pkg->name, "path", it->file->path,
                  "sig_type", rs_sig_type_name(it->file->type), "signed_digest", digest, "tbs_digest", tbs,
                  "signer_fingerprint", fpr, "signature_sha256", sig);
    if (!o || !(text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER)))
        return rs_fail(err, "out of memory");
    fputs("    ", f);
    for (const char *p = text; *p; p++)
        fputs(*p == '\n' ? "\n    " : (char[]){ *p, 0 }, f);
    fputs(last ? "\n" : ",\n", f);
    return 0;
}

/* Written entry by entry: a document of 50,000 files is never held whole. */
static int write_manifest(job *j, rs_error *err)
{
    _cleanup_free_ char *path = NULL, *tmp = NULL, *head = NULL;
    _cleanup_fclose_ FILE *f = NULL;
    json_auto_t *top = json_pack("{s:s?, s:s?}", "template", j->tpl.package, "template_version", j->tpl.version);
    int rc = 0;

    if (asprintf(&path, "%s/manifest.json", j->work) < 0 || asprintf(&tmp, "%s.tmp", path) < 0 || !top ||
        !(head = json_dumps(top, JSON_INDENT(2) | JSON_PRESERVE_ORDER)))
        return rs_fail(err, "out of memory");
    if (!(f = fopen(tmp, "we")))
        return rs_fail(err, "%s: %s", tmp, strerror(errno));
    /* head is "{\n  ...\n}", or "{}" with neither member: "files" follows. */
    bool members = strlen(head) > 2;

    head[strlen(head) - (members ? 2 : 1)] = '\0';
    fprintf(f, "%s%s  \"files\": [%s", head, members ? ",\n" : "\n", j->n_items ? "\n" : "");
    for (size_t i = 0; rc == 0 && i < j->n_items; i++)
        rc = write_manifest_entry(f, j, &j->items[i], i + 1 == j->n_items, err);
    fputs(j->n_items ? "  ]\n}" : "]\n}", f);
    if (rc == 0 && (fflush(f) != 0 || ferror(f) || rename(tmp, path) < 0))
        rc = rs_fail(err, "%s: %s", path, strerror(errno));
    return rc;
}

static int output_mtime(job *j, rs_error *err)
{
    time_t t = 0;
    bool set;

    if (rs_source_date_epoch(&t, &set, err) < 0)
        return -1;
    j->mtime = set ? t : j->tpl.changelog_time;
    return 0;
}

/* nftw() passes no context; set just before the walk. */
static time_t tree_mtime;

static int set_mtimes(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    struct timespec ts[2];

    (void)st, (void)flag, (void)ftw;
    ts[0].tv_sec = ts[1].tv_sec = tree_mtime;
    ts[0].tv_nsec = ts[1].tv_nsec = 0;
    return utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW);
}

/* Copied before anything is signed: a source-template that cannot be
 * used is refused without a signature made for nothing. */
static int copy_source_template(job *j, rs_error *err)
{
    const char *version = j->tpl.source_version, *colon;

    if (!j->tpl.source_dir)
        return 0;
    colon = strchr(version, ':');
    if (asprintf(&j->source_tree, "%s/%s-%s", j->work, j->tpl.source_name, colon ? colon + 1 : version) < 0)
        return rs_fail(err, "out of memory");
    return rs_copy_source_tree(j->tpl.source_dir, j->source_tree, err);
}

static int build_source_package(job *j, rs_error *err)
{
    _cleanup_free_ char *sigs = NULL;

    if (!j->source_tree)
        return 0;
    if (asprintf(&sigs, "%s/debian/signatures", j->source_tree) < 0)
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < j->n_items; i++)
        if (link_sig(j, sigs, &j->items[i], err) < 0)
            return -1;
    /* Fixed mtimes, so dpkg-source builds the same tarball every time. */
    tree_mtime = j->mtime;
    if (nftw(j->source_tree, set_mtimes, 16, FTW_PHYS) != 0)
        return rs_fail(err, "%s: cannot set file times", j->source_tree);
    char *argv[] = { "dpkg-source", "--format=3.0 (native)", "-b", basename(j->source_tree), NULL };
    return rs_run_tool(argv, j->work, err);
}

static int assemble_outputs(job *j, rs_error *err)
{
    _cleanup_free_ char *tmpl_dir = NULL;

    if (asprintf(&tmpl_dir, "%s/source-template", j->work) < 0)
        return rs_fail(err, "out of memory");
    if (write_manifest(j, err) < 0 || build_source_package(j, err) < 0)
        return -1;
    rs_remove_tree(tmpl_dir);   /* a .deb template's unpacked source-template */
    return 0;
}

static int make_workdir(job *j, rs_error *err)
{
    _cleanup_free_ char *copy = strdup(j->o->output_dir), *copy2 = strdup(j->o->output_dir);
    struct stat st;

    if (!copy || !copy2)
        return rs_fail(err, "out of memory");
    if (lstat(j->o->output_dir, &st) == 0)
        return rs_fail(err, "%s: already exists", j->o->output_dir);
    if (asprintf(&j->work, "%s/.%s.partial-XXXXXX", dirname(copy), basename(copy2)) < 0) {
        j->work = NULL;
        return rs_fail(err, "out of memory");
    }
    if (!mkdtemp(j->work))
        return rs_fail(err, "%s: cannot create a work directory: %s", j->o->output_dir, strerror(errno));
    chmod(j->work, 0755);
    if (asprintf(&j->sigdir, "%s/signatures", j->work) < 0) {
        j->sigdir = NULL;
        return rs_fail(err, "out of memory");
    }
    return 0;
}

int rs_sign_template(const rs_sign_template_options *o, rs_error *err)
{
    job j = { .o = o };
    int rc;

    rc = make_workdir(&j, err);
    if (rc == 0 && (rc = rs_template_load(o->template_spec, j.work, &j.tpl, err)) < 0)
        rs_error_prefix(err, "%s", o->template_spec);
    if (rc == 0)
        rc = check_trusted_certs(&j, err);
    if (rc == 0)
        rc = output_mtime(&j, err);
    if (rc == 0)
        rc = copy_source_template(&j, err);
    if (rc == 0 && (rc = rs_pkgset_scan(o->packages_dir, &j.inputs, err)) == 0 && (rc = make_items(&j, err)) == 0 &&
        (rc = digest_debs_early(&j, err)) == 0 && (rc = resolve_items(&j, err)) == 0)
        rc = order_items(&j, err);
    if (rc == 0)
        rc = start_tarball(&j, err);
    if (rc == 0)
        rc = digest_all(&j, err);
    if (rc == 0)
        rc = sign_all(&j, err);
    rs_tarball_feed_free(TAKE_PTR(j.feed));   /* stopped before the work directory can go */
    if (rc == 0)
        rc = assemble_outputs(&j, err);
    if (rc == 0)
        rc = rs_sync_filesystem(j.work, err);
    if (rc == 0 && rename(j.work, o->output_dir) < 0)
        rc = rs_fail(err, "%s: cannot move the result into place: %s", o->output_dir, strerror(errno));
    if (rc < 0)
        rs_remove_tree(j.work);
    job_free(&j);
    return rc;
}

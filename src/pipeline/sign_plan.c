/* The sign_template planner: refusals that need no file contents, one
 * item per listed file with its package chosen, the items in
 * signatures.tar.gz order; then every path resolved inside its package. */
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "pipeline/sign_job.h"
#include "pipeline/source_binding.h"

/* An allowlist names a few certificates, one 64-character line each. */
#define MAX_ALLOWLIST (1024 * 1024)

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
int rs_sign_check_trusted_certs(rs_sign_job *j, rs_error *err)
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

/* One item for each of pkg's files, all read from the one package the
 * template means by pkg's name. */
static int add_package_items(rs_sign_job *j, const rs_sign_package *pkg, rs_error *err)
{
    _cleanup_free_ char *pinned = NULL;
    const char *want = rs_template_wanted_version(&j->tpl, pkg->name, &pinned);
    rs_pkgtree *tree;

    if (rs_pkgset_choose(&j->inputs, pkg->name, want, &tree, err) < 0 ||
        rs_check_source_binding(j->tpl.source, pkg->name, tree, &j->o->foreign_sources, err) < 0)
        return -1;
    for (size_t f = 0; f < pkg->n_files; f++) {
        rs_sign_item *it = &j->items[j->n_items++];

        *it = (rs_sign_item){ .pkg = pkg, .file = &pkg->files[f], .tree = tree };
    }
    return 0;
}

char *rs_sign_item_sig_name(const rs_sign_item *it)
{
    char *name;

    return asprintf(&name, "%s/%s.sig", it->pkg->name, it->file->path) < 0 ? NULL : name;
}

/* PKG/PATH.sig in rs_tarball_path_cmp's order. A package name holds no
 * '/', so two names of one package compare as their PATH.sig, and names
 * of two packages as the packages' names (where one name ends, its '/'
 * ranks below any byte of the other). */
static int cmp_sig_name(const void *a, const void *b)
{
    const rs_sign_item *x = *(rs_sign_item *const *)a, *y = *(rs_sign_item *const *)b;

    int c = x->pkg == y->pkg ? 0 : rs_tarball_path_cmp(x->pkg->name, y->pkg->name);

    return c ? c : rs_tarball_suffixed_cmp(x->file->path, y->file->path, ".sig");
}

/* Whether b's PATH lies below a's PATH.sig. */
static bool below_sig_of(const rs_sign_item *a, const rs_sign_item *b)
{
    size_t n = strlen(a->file->path);

    return a->pkg == b->pkg && !strncmp(a->file->path, b->file->path, n) && !strncmp(b->file->path + n, ".sig/", 5);
}

/* Sorted, two signatures that would land on one path, or a signature
 * where another needs a directory, are next to each other. */
static int order_items(rs_sign_job *j, rs_error *err)
{
    if (!(j->by_name = calloc(j->n_items, sizeof(*j->by_name))))
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < j->n_items; i++)
        j->by_name[i] = &j->items[i];
    qsort(j->by_name, j->n_items, sizeof(*j->by_name), cmp_sig_name);
    for (size_t i = 0; i < j->n_items; i++)
        j->by_name[i]->order = i;
    for (size_t i = 1; i < j->n_items; i++) {
        const rs_sign_item *a = j->by_name[i - 1], *b = j->by_name[i];

        if (cmp_sig_name(&j->by_name[i - 1], &j->by_name[i]) == 0)
            return rs_fail(err, "package %s: %s is listed twice", a->pkg->name, a->file->path);
        if (below_sig_of(a, b))
            return rs_fail(err, "package %s: %s.sig would be both the signature of %s and a directory above %s's",
                           a->pkg->name, a->file->path, a->file->path, b->file->path);
    }
    return 0;
}

void rs_sign_item_digest(const rs_sign_job *j, const rs_sign_item *it, rs_digest *out)
{
    *out = (rs_digest){ .md = j->o->sign.md, .len = (unsigned)j->digest_len };
    memcpy(out->bytes, j->digests + (size_t)(it - j->items) * j->digest_len, j->digest_len);
}

int rs_sign_item_keep_digest(rs_sign_job *j, const rs_sign_item *it, const rs_digest *d, rs_error *err)
{
    if (d->md != j->o->sign.md || d->len != j->digest_len)
        return rs_fail(err, "package %s: %s: digest of %u bytes, not %zu", it->pkg->name, it->file->path, d->len,
                       j->digest_len);
    memcpy(j->digests + (size_t)(it - j->items) * j->digest_len, d->bytes, d->len);
    return 0;
}

int rs_sign_plan_items(rs_sign_job *j, rs_error *err)
{
    size_t total = 0;

    for (size_t p = 0; p < j->tpl.files.n_packages; p++)
        total += j->tpl.files.packages[p].n_files;
    if (total == 0)
        return rs_fail(err, "the template lists no files to sign");
    j->digest_len = (size_t)EVP_MD_get_size(j->o->sign.md);
    if (!(j->items = calloc(total, sizeof(*j->items))) || !(j->digests = calloc(total, j->digest_len)))
        return rs_fail(err, "out of memory");
    for (size_t p = 0; p < j->tpl.files.n_packages; p++)
        if (add_package_items(j, &j->tpl.files.packages[p], err) < 0)
            return -1;
    rs_progress_total(j->o->progress, j->n_items);
    return order_items(j, err);
}

/* An item read as named from a source where that needs no resolving
 * (pkgsource.h) is resolved already: to its own path, which it shares. */
int rs_sign_plan_resolve(rs_sign_job *j, rs_error *err)
{
    for (size_t i = 0; i < j->n_items; i++) {
        rs_sign_item *it = &j->items[i];

        if (it->format && it->tree->ops->named_is_resolved) {
            it->resolved = it->file->path;
            continue;
        }
        if (rs_pkgtree_resolve(it->tree, it->file->path, &it->resolved, err) < 0)
            return rs_error_prefix(err, "package %s (%s)", it->pkg->name, it->tree->origin);
    }
    return 0;
}


void rs_sign_plan_free(rs_sign_job *j)
{
    for (size_t i = 0; i < j->n_items; i++) {
        if (j->items[i].resolved != j->items[i].file->path)
            free(j->items[i].resolved);
        rs_bytes_free(&j->items[i].sig);
    }
    free(j->items);
    free(j->digests);
    free(j->tar_name);
    j->digests = NULL;
    j->tar_name = NULL;
    free(j->by_name);
    for (size_t a = 0; a < j->n_allowed; a++)
        free(j->allowed[a]);
    free(j->allowed);
    j->items = NULL;
    j->by_name = NULL;
    j->allowed = NULL;
    j->n_items = j->n_allowed = 0;
}

/* The sign_template planner: refusals that need no file contents, each
 * package's source chosen, the items put in signatures.tar.gz order. */
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "pipeline/sign_job.h"
#include "pipeline/sign_rebuilds.h"
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

/* The one package the template means by pkg's name, for all its files. */
static int choose_package(rs_sign_job *j, size_t p, rs_error *err)
{
    const rs_sign_package *pkg = &j->tpl.files.packages[p];
    _cleanup_free_ char *pinned = NULL;
    const char *want = rs_template_wanted_version(&j->tpl, pkg->name, &pinned);

    if (rs_pkgset_choose(&j->inputs, pkg->name, want, &j->trees[p], err) < 0 ||
        rs_check_source_binding(j->tpl.source, pkg->name, j->trees[p], &j->o->foreign_sources, err) < 0)
        return -1;
    return j->o->rebuilds ? rs_sign_require_rebuilds(j->o->rebuilds, j->trees[p], err) : 0;
}

char *rs_sign_item_sig_name(const rs_sign_item *it)
{
    char *name;

    return asprintf(&name, "%s/%s.sig", it->pkg->name, it->path) < 0 ? NULL : name;
}

void rs_sign_item_digest(const rs_sign_job *j, const rs_sign_item *it, rs_digest *out)
{
    *out = (rs_digest){ .md = j->o->sign.md, .len = (unsigned)j->digest_len };
    memcpy(out->bytes, it->rec.digest, j->digest_len);
}

int rs_sign_item_keep_digest(rs_sign_job *j, rs_sign_item *it, const rs_digest *d, rs_error *err)
{
    if (d->md != j->o->sign.md || d->len != j->digest_len)
        return rs_fail(err, "package %s: %s: digest of %u bytes, not %zu", it->pkg->name, it->path, d->len,
                       j->digest_len);
    memcpy(it->rec.digest, d->bytes, d->len);
    return 0;
}

/* The files are in the store (the template's sink put them there as
 * files.json was read), one package's after another's. */
int rs_sign_plan_items(rs_sign_job *j, rs_error *err)
{
    size_t n_packages = j->tpl.files.n_packages, first = 0;

    if (rs_sign_store_flush(j, err) < 0)
        return -1;
    if (j->n_items == 0)
        return rs_fail(err, "the template lists no files to sign");
    j->digest_len = (size_t)EVP_MD_get_size(j->o->sign.md);
    if (j->digest_len > EVP_MAX_MD_SIZE)
        return rs_fail(err, "a digest of %zu bytes", j->digest_len);
    if (!(j->trees = calloc(n_packages, sizeof(*j->trees))) || !(j->pkg_first = calloc(n_packages, sizeof(size_t))))
        return rs_fail(err, "out of memory");
    for (size_t p = 0; p < n_packages; p++) {
        j->pkg_first[p] = first;
        first += j->tpl.files.packages[p].n_files;
        if (choose_package(j, p, err) < 0)
            return -1;
    }
    if (first != j->n_items)
        return rs_fail(err, "files.json: %zu files listed, %zu kept", first, j->n_items);
    rs_progress_total(j->o->progress, j->n_items);
    return rs_sign_order_items(j, err);
}

void rs_sign_plan_free(rs_sign_job *j)
{
    rs_sign_store_free(j);
    free(j->trees);
    free(j->pkg_first);
    free(j->tar_name);
    j->trees = NULL;
    j->pkg_first = NULL;
    j->tar_name = NULL;
    for (size_t a = 0; a < j->n_allowed; a++)
        free(j->allowed[a]);
    free(j->allowed);
    j->allowed = NULL;
    j->n_items = j->n_allowed = 0;
}

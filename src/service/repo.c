#include "service/repo.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "crypto/ossl.h"
#include "service/gpgv.h"
#include "service/release_meta.h"
#include "service/repo_scan.h"

/* Debian's own Release files are well under 1 MiB; read whole, since
 * gpgv checks them whole. */
#define MAX_RELEASE (64 * 1024 * 1024)
/* The largest Packages index (main, amd64, uncompressed) is about 100 MB;
 * it is scanned, never held in memory. */
#define MAX_PACKAGES (512 * 1024 * 1024)

/* ---- the repository ---- */
/* A file of the archive that cannot be read now may be readable later (a
 * mirror mid-sync, a network filesystem away): a transient failure. */
static int reachable(const char *path, rs_error *err)
{
    if (access(path, R_OK) == 0)
        return 0;
    return rs_fail_transient(err, RS_TRANSIENT_IO, "%s: %s (the archive is unreachable or incomplete)", path, strerror(errno));
}

/* The name in dists/ that dists/<suite> resolves to: an alias resolves to
 * a suite beside it, or it names nothing. Resolved once a read, and the
 * rest of that read goes by the resolved name, so an alias repointed
 * meanwhile cannot mix two suites into one read. */
static int resolve_suite(const rs_repo *r, const char *suite, char **dir, rs_error *err)
{
    _cleanup_free_ char *dists = NULL, *link = NULL, *real_dists = NULL, *real = NULL;
    size_t n;

    *dir = NULL;
    if (!rs_valid_suite(suite))
        return rs_fail(err, "'%s' is not a valid suite name", suite);
    if (!(dists = rs_path_join(r->root, "dists")) || !(link = rs_path_join(dists, suite)))
        return rs_fail(err, "out of memory");
    if (!(real_dists = realpath(dists, NULL)) || !(real = realpath(link, NULL)))
        return rs_fail_transient(err, RS_TRANSIENT_IO, "%s: %s (the archive is unreachable or incomplete)", link,
                                 strerror(errno));
    n = strlen(real_dists);
    if (strncmp(real, real_dists, n) || real[n] != '/' || strchr(real + n + 1, '/') || !rs_valid_suite(real + n + 1))
        return rs_fail(err, "%s: resolves to %s, outside %s", link, real, real_dists);
    if (!(*dir = strdup(real + n + 1)))
        return rs_fail(err, "out of memory");
    return 0;
}

/* The Release of dists/<dir>, verified when a keyring is set, and fresh. */
static int read_verified_release(const rs_repo *r, const char *dir, rs_bytes *text, rs_release_meta *meta,
                                 rs_error *err)
{
    _cleanup_free_ char *path = NULL, *sig_path = NULL;
    _cleanup_bytes_ rs_bytes sig = { 0 };

    if (asprintf(&path, "%s/dists/%s/Release", r->root, dir) < 0 || asprintf(&sig_path, "%s.gpg", path) < 0)
        return rs_fail(err, "out of memory");
    if (reachable(path, err) < 0)
        return -1;
    if (rs_read_file(path, MAX_RELEASE, text, err) < 0)
        return rs_error_prefix(err, "%s", path);
    if (r->keyring && rs_read_file(sig_path, MAX_RELEASE, &sig, err) < 0)
        return rs_error_prefix(err, "%s", sig_path);
    if (r->keyring && rs_gpgv_verify(r->keyring, text, &sig, NULL, err) < 0)
        return rs_error_prefix(err, "%s", path);
    if (rs_release_meta_parse((const char *)text->data, text->len, meta, err) < 0 ||
        rs_release_meta_check_fresh(meta, time(NULL), r->max_age, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

/* The suite's verified Release, and who the suite is by it. */
static int read_suite(const rs_repo *r, const char *suite, rs_bytes *text, rs_suite_identity *id, rs_error *err)
{
    rs_release_meta meta = { 0 };
    int rc;

    memset(id, 0, sizeof(*id));
    if (resolve_suite(r, suite, &id->dir, err) < 0)
        return -1;
    rc = read_verified_release(r, id->dir, text, &meta, err);
    id->suite = TAKE_PTR(meta.suite);
    id->codename = TAKE_PTR(meta.codename);
    rs_release_meta_free(&meta);
    if (rc < 0)
        rs_suite_identity_free(id);
    return rc;
}

int rs_repo_suite_identity(const rs_repo *r, const char *suite, rs_suite_identity *id, rs_error *err)
{
    _cleanup_bytes_ rs_bytes text = { 0 };

    return read_suite(r, suite, &text, id, err);
}

/* Searches an index the Release file lists, refusing it unless its size
 * and hash are the ones listed. */
static int search_index(const rs_repo *r, const char *dir, const rs_release_file *f, const char *package,
                        const char *version, const char *arch, rs_repo_package *out, bool *found, rs_error *err)
{
    _cleanup_free_ char *path = NULL;

    if (asprintf(&path, "%s/dists/%s/%s", r->root, dir, f->path) < 0)
        return rs_fail(err, "out of memory");
    if (reachable(path, err) < 0)
        return -1;
    if (f->size > MAX_PACKAGES)
        return rs_fail(err, "%s: its Release file lists %llu bytes, over the limit of %d", path,
                       (unsigned long long)f->size, MAX_PACKAGES);
    return rs_packages_scan(path, f, package, version, arch, out, found, err);
}

/* "<component>/binary-<arch>/Packages" for the wanted architecture. */
static bool is_packages_for(const char *path, const char *arch)
{
    const char *slash = strchr(path, '/');
    char want[128];

    if (!slash || (size_t)snprintf(want, sizeof(want), "/binary-%s/Packages", arch) >= sizeof(want))
        return false;
    return !strcmp(slash, want);
}

int rs_repo_find(const rs_repo *r, const char *suite, const char *arch, const char *package, const char *version,
                 rs_repo_package *out, rs_suite_identity *seen, rs_error *err)
{
    _cleanup_bytes_ rs_bytes text = { 0 };
    rs_release_file *files = NULL;
    size_t n = 0;
    bool found = false, any = false;
    int rc;

    memset(out, 0, sizeof(*out));
    if (read_suite(r, suite, &text, seen, err) < 0)
        return -1;
    if ((rc = rs_release_parse((const char *)text.data, text.len, &files, &n, err)) < 0)
        rs_error_prefix(err, "%s/dists/%s/Release", r->root, seen->dir);
    for (size_t i = 0; rc == 0 && !found && i < n; i++) {
        if (!is_packages_for(files[i].path, arch))
            continue;
        any = true;
        rc = search_index(r, seen->dir, &files[i], package, version, arch, out, &found, err);
    }
    rs_release_files_free(files, n);
    if (rc == 0 && !any)
        rc = rs_fail(err, "suite %s has no uncompressed Packages index for %s", suite, arch);
    else if (rc == 0 && !found)
        rc = rs_fail(err, "%s %s (%s) is not in suite %s", package, version, arch, suite);
    return rc;
}

static void hash_chunk(void *md, const uint8_t *data, size_t len)
{
    EVP_DigestUpdate(md, data, len);
}

int rs_repo_fetch(const rs_repo *r, const rs_repo_package *p, const char *dest, rs_error *err)
{
    _cleanup_free_ char *path = NULL;
    _cleanup_input_ rs_input in = { .fd = -1 };
    _cleanup_output_ rs_output out = { .fd = -1 };
    _cleanup_(rs_mdctxp) EVP_MD_CTX *md = EVP_MD_CTX_new();
    uint8_t got[32];

    if (!md || !(path = rs_path_join(r->root, p->filename)))
        return rs_fail(err, "out of memory");
    if (reachable(path, err) < 0)
        return -1;
    if (rs_input_open(&in, path, err) < 0)
        return rs_error_prefix(err, "%s", path);
    if (in.size != p->size)
        return rs_fail(err, "%s: does not match the size and SHA-256 in the Packages index; refusing to read it", path);
    if (!EVP_DigestInit_ex(md, EVP_sha256(), NULL))
        return rs_fail_ssl(err, "SHA-256");
    if (rs_output_open(&out, dest, 0644, err) < 0)
        return rs_error_prefix(err, "%s", dest);
    out.observe = hash_chunk;
    out.observe_ctx = md;
    if (rs_output_copy(&out, &in, 0, in.size, err) < 0)
        return rs_error_prefix(err, "%s: copying to %s", path, dest);
    if (!EVP_DigestFinal_ex(md, got, NULL))
        return rs_fail_ssl(err, "SHA-256");
    if (memcmp(got, p->sha256, 32) != 0)
        return rs_fail(err, "%s: does not match the size and SHA-256 in the Packages index; refusing to read it", path);
    return rs_output_commit(&out, err);
}

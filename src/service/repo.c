#include "service/repo.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "crypto/ossl.h"
#include "pipeline/files_json.h"
#include "service/gpgv.h"
#include "service/release_meta.h"

#define MAX_RELEASE (64 * 1024 * 1024)
#define MAX_PACKAGES (512 * 1024 * 1024)
#define MAX_FIELDS 1024

/* ---- deb822 ---- */

void rs_deb822_free(rs_deb822 *paras, size_t n)
{
    for (size_t i = 0; paras && i < n; i++) {
        for (size_t f = 0; f < paras[i].n; f++) {
            free(paras[i].fields[f].name);
            free(paras[i].fields[f].value);
        }
        free(paras[i].fields);
    }
    free(paras);
}

const char *rs_deb822_get(const rs_deb822 *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (!strcasecmp(p->fields[i].name, name))
            return p->fields[i].value;
    return NULL;
}

static bool blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!isspace((unsigned char)s[i]))
            return false;
    return true;
}

static int add_field(rs_deb822 *p, const char *line, size_t len, rs_error *err)
{
    const char *colon = memchr(line, ':', len);
    rs_deb822_field *grown;
    size_t vstart;

    if (!colon || colon == line)
        return rs_fail(err, "'%.*s' is not a 'Field: value' line", (int)(len > 60 ? 60 : len), line);
    if (p->n >= MAX_FIELDS || !(grown = realloc(p->fields, (p->n + 1) * sizeof(*grown))))
        return rs_fail(err, "too many fields");
    p->fields = grown;
    vstart = (size_t)(colon - line) + 1;
    while (vstart < len && (line[vstart] == ' ' || line[vstart] == '\t'))
        vstart++;
    grown[p->n].name = strndup(line, (size_t)(colon - line));
    grown[p->n].value = strndup(line + vstart, len - vstart);
    grown[p->n].len = len - vstart;
    grown[p->n].cap = len - vstart + 1;
    p->n++;
    if (!grown[p->n - 1].name || !grown[p->n - 1].value)
        return rs_fail(err, "out of memory");
    return 0;
}

/* Appends in place with room to spare: a Release file's checksum fields
 * run to thousands of lines, and copying the value for each would make
 * reading one quadratic (found by fuzz_requests: 0.25 s for 9 KB). */
static int continue_field(rs_deb822 *p, const char *line, size_t len, rs_error *err)
{
    rs_deb822_field *f;
    size_t need;

    if (p->n == 0)
        return rs_fail(err, "a continuation line before any field");
    f = &p->fields[p->n - 1];
    need = f->len + 1 + (len - 1) + 1;
    if (need > f->cap) {
        size_t cap = need > 2 * f->cap ? need : 2 * f->cap;
        char *grown = realloc(f->value, cap);

        if (!grown)
            return rs_fail(err, "out of memory");
        f->value = grown;
        f->cap = cap;
    }
    f->value[f->len++] = '\n';
    memcpy(f->value + f->len, line + 1, len - 1);
    f->len += len - 1;
    f->value[f->len] = '\0';
    return 0;
}

static int new_para(rs_deb822 **paras, size_t *n, rs_error *err)
{
    rs_deb822 *grown = realloc(*paras, (*n + 1) * sizeof(*grown));

    if (!grown)
        return rs_fail(err, "out of memory");
    grown[*n] = (rs_deb822){ 0 };
    *paras = grown;
    (*n)++;
    return 0;
}

static int parse_line(const char *line, size_t len, bool *open, rs_deb822 **paras, size_t *n, rs_error *err)
{
    if (blank(line, len)) {
        *open = false;
        return 0;
    }
    if (line[0] == '#')
        return 0;
    if (line[0] == ' ' || line[0] == '\t')
        return *open ? continue_field(&(*paras)[*n - 1], line, len, err) : rs_fail(err, "a continuation line starts a paragraph");
    if (!*open) {
        if (new_para(paras, n, err) < 0)
            return -1;
        *open = true;
    }
    return add_field(&(*paras)[*n - 1], line, len, err);
}

int rs_deb822_parse(const char *text, size_t len, rs_deb822 **paras, size_t *n, rs_error *err)
{
    size_t start = 0, lineno = 0;
    bool open = false;

    *paras = NULL;
    *n = 0;
    if (memchr(text, '\0', len))
        return rs_fail(err, "contains a NUL byte");
    while (start < len) {
        const char *nl = memchr(text + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - text) : len, l = end - start;

        lineno++;
        if (l && text[start + l - 1] == '\r')
            l--;
        if (parse_line(text + start, l, &open, paras, n, err) < 0) {
            rs_deb822_free(*paras, *n);
            *paras = NULL;
            *n = 0;
            return rs_error_prefix(err, "line %zu", lineno);
        }
        start = end + 1;
    }
    return 0;
}

/* ---- Release ---- */

bool rs_valid_suite(const char *s)
{
    if (!s || !*s || *s == '.' || strlen(s) > 128)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("._-", *s))
            return false;
    return true;
}

void rs_release_files_free(rs_release_file *files, size_t n)
{
    for (size_t i = 0; files && i < n; i++)
        free(files[i].path);
    free(files);
}

static bool parse_u64(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 0;

    if (len == 0 || len > 19)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

/* " <sha256> <size> <path>" */
static int parse_checksum_line(const char *line, size_t len, rs_release_file *f, rs_error *err)
{
    char hash[65];
    const char *p = line, *end = line + len, *sp;

    while (p < end && *p == ' ')
        p++;
    if (end - p < 66 || p[64] != ' ')
        return rs_fail(err, "SHA256: '%.*s' is not 'hash size path'", (int)(len > 80 ? 80 : len), line);
    memcpy(hash, p, 64);
    hash[64] = '\0';
    if (rs_unhex(hash, f->sha256, 32) < 0)
        return rs_fail(err, "SHA256: '%s' is not a SHA-256 hash", hash);
    p += 65;
    while (p < end && *p == ' ')
        p++;
    sp = memchr(p, ' ', (size_t)(end - p));
    if (!sp || !parse_u64(p, (size_t)(sp - p), &f->size))
        return rs_fail(err, "SHA256: bad size for %s", hash);
    while (sp < end && *sp == ' ')
        sp++;
    if (!(f->path = strndup(sp, (size_t)(end - sp))))
        return rs_fail(err, "out of memory");
    if (!rs_valid_relative_path(f->path))
        return rs_fail(err, "SHA256: '%s' is not a safe relative path", f->path);
    return 0;
}

static int parse_checksums(const char *value, rs_release_file **files, size_t *n, rs_error *err)
{
    const char *line = value;

    while (*line) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        rs_release_file *grown;

        if (!blank(line, len)) {
            if (!(grown = realloc(*files, (*n + 1) * sizeof(*grown))))
                return rs_fail(err, "out of memory");
            *files = grown;
            grown[*n] = (rs_release_file){ 0 };
            (*n)++;
            if (parse_checksum_line(line, len, &grown[*n - 1], err) < 0)
                return -1;
        }
        line += len + (nl ? 1 : 0);
    }
    return 0;
}

int rs_release_parse(const char *text, size_t len, rs_release_file **files, size_t *n, rs_error *err)
{
    rs_deb822 *paras = NULL;
    size_t np = 0;
    const char *sums;
    int rc;

    *files = NULL;
    *n = 0;
    if (rs_deb822_parse(text, len, &paras, &np, err) < 0)
        return -1;
    sums = np == 1 ? rs_deb822_get(&paras[0], "SHA256") : NULL;
    rc = sums ? parse_checksums(sums, files, n, err) : rs_fail(err, "not a Release file with a SHA256 field");
    rs_deb822_free(paras, np);
    if (rc < 0) {
        rs_release_files_free(*files, *n);
        *files = NULL;
        *n = 0;
    }
    return rc;
}

/* ---- Packages ---- */

void rs_repo_package_free(rs_repo_package *p)
{
    free(p->package);
    free(p->version);
    free(p->architecture);
    free(p->filename);
    memset(p, 0, sizeof(*p));
}

static int take_stanza(const rs_deb822 *s, rs_repo_package *out, rs_error *err)
{
    const char *file = rs_deb822_get(s, "Filename"), *size = rs_deb822_get(s, "Size");
    const char *sha = rs_deb822_get(s, "SHA256");

    if (!file || !rs_valid_relative_path(file))
        return rs_fail(err, "its Filename is missing or not a safe relative path");
    if (!size || !parse_u64(size, strlen(size), &out->size))
        return rs_fail(err, "its Size is missing or invalid");
    if (!sha || strlen(sha) != 64 || rs_unhex(sha, out->sha256, 32) < 0)
        return rs_fail(err, "it has no SHA256");
    out->package = strdup(rs_deb822_get(s, "Package"));
    out->version = strdup(rs_deb822_get(s, "Version"));
    out->architecture = strdup(rs_deb822_get(s, "Architecture"));
    out->filename = strdup(file);
    if (!out->package || !out->version || !out->architecture || !out->filename)
        return rs_fail(err, "out of memory");
    return 0;
}

static bool stanza_matches(const rs_deb822 *s, const char *package, const char *version, const char *arch)
{
    const char *p = rs_deb822_get(s, "Package"), *v = rs_deb822_get(s, "Version");
    const char *a = rs_deb822_get(s, "Architecture");

    return p && v && a && !strcmp(p, package) && !strcmp(v, version) && (!strcmp(a, arch) || !strcmp(a, "all"));
}

int rs_packages_find(const char *text, size_t len, const char *package, const char *version, const char *arch,
                     rs_repo_package *out, bool *found, rs_error *err)
{
    rs_deb822 *paras = NULL;
    size_t n = 0;
    int rc = 0;

    *found = false;
    memset(out, 0, sizeof(*out));
    if (rs_deb822_parse(text, len, &paras, &n, err) < 0)
        return -1;
    for (size_t i = 0; i < n && !*found; i++) {
        if (!stanza_matches(&paras[i], package, version, arch))
            continue;
        *found = true;
        if ((rc = take_stanza(&paras[i], out, err)) < 0) {
            rs_repo_package_free(out);
            rs_error_prefix(err, "%s %s", package, version);
        }
    }
    rs_deb822_free(paras, n);
    return rc;
}

/* ---- the repository ---- */

/* A file of the archive that cannot be read now may be readable later (a
 * mirror mid-sync, a network filesystem away): a transient failure. */
static int reachable(const char *path, rs_error *err)
{
    if (access(path, R_OK) == 0)
        return 0;
    return rs_fail_transient(err, RS_TRANSIENT_IO, "%s: %s (the archive is unreachable or incomplete)", path, strerror(errno));
}

/* The suite's Release, verified when a keyring is set, and fresh. */
static int read_verified_release(const rs_repo *r, const char *suite, rs_bytes *text, rs_release_meta *meta,
                                 rs_error *err)
{
    _cleanup_free_ char *path = NULL, *sig_path = NULL;
    _cleanup_bytes_ rs_bytes sig = { 0 };

    if (!rs_valid_suite(suite))
        return rs_fail(err, "'%s' is not a valid suite name", suite);
    if (asprintf(&path, "%s/dists/%s/Release", r->root, suite) < 0 || asprintf(&sig_path, "%s.gpg", path) < 0)
        return rs_fail(err, "out of memory");
    if (reachable(path, err) < 0)
        return -1;
    if (rs_read_file(path, MAX_RELEASE, text, err) < 0)
        return rs_error_prefix(err, "%s", path);
    if (r->keyring && (rs_read_file(sig_path, MAX_RELEASE, &sig, err) < 0 ||
                       rs_gpgv_verify(r->keyring, text, &sig, NULL, err) < 0))
        return rs_error_prefix(err, "%s", path);
    if (rs_release_meta_parse((const char *)text->data, text->len, meta, err) < 0 ||
        rs_release_meta_check_fresh(meta, time(NULL), r->max_age, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

static int read_release(const rs_repo *r, const char *suite, rs_release_file **files, size_t *n, rs_error *err)
{
    _cleanup_bytes_ rs_bytes text = { 0 };
    rs_release_meta meta = { 0 };
    int rc = read_verified_release(r, suite, &text, &meta, err);

    rs_release_meta_free(&meta);
    if (rc == 0 && rs_release_parse((const char *)text.data, text.len, files, n, err) < 0)
        return rs_error_prefix(err, "%s/dists/%s/Release", r->root, suite);
    return rc;
}

int rs_repo_suite_identity(const rs_repo *r, const char *suite, rs_release_meta *meta, char **dir_name,
                           rs_error *err)
{
    _cleanup_bytes_ rs_bytes text = { 0 };
    _cleanup_free_ char *dists = NULL, *link = NULL, *real_dists = NULL, *real = NULL;
    size_t n;

    *dir_name = NULL;
    if (read_verified_release(r, suite, &text, meta, err) < 0)
        return -1;
    if (asprintf(&dists, "%s/dists", r->root) < 0 || asprintf(&link, "%s/%s", dists, suite) < 0)
        return rs_fail(err, "out of memory");
    if (!(real_dists = realpath(dists, NULL)) || !(real = realpath(link, NULL)))
        return rs_fail(err, "%s: %s", link, strerror(errno));
    n = strlen(real_dists);
    /* An alias resolves to a suite beside it, or it names nothing. */
    if (strncmp(real, real_dists, n) || real[n] != '/' || strchr(real + n + 1, '/') || !rs_valid_suite(real + n + 1))
        return rs_fail(err, "%s: resolves to %s, outside %s", link, real, real_dists);
    if (!(*dir_name = strdup(real + n + 1)))
        return rs_fail(err, "out of memory");
    return 0;
}

/* Reads an index the Release file lists, refusing it unless its size and
 * hash are the ones listed. */
static int read_index(const rs_repo *r, const char *suite, const rs_release_file *f, rs_bytes *out, rs_error *err)
{
    _cleanup_free_ char *path = NULL;
    uint8_t got[32];

    if (asprintf(&path, "%s/dists/%s/%s", r->root, suite, f->path) < 0)
        return rs_fail(err, "out of memory");
    if (reachable(path, err) < 0)
        return -1;
    if (f->size > MAX_PACKAGES || rs_read_file(path, MAX_PACKAGES, out, err) < 0)
        return rs_error_prefix(err, "%s", path);
    rs_sha256(out->data, out->len, got);
    if (out->len != f->size || memcmp(got, f->sha256, 32) != 0)
        return rs_fail(err, "%s: does not match the size and SHA-256 its Release file lists", path);
    return 0;
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
                 rs_repo_package *out, rs_error *err)
{
    rs_release_file *files = NULL;
    size_t n = 0;
    bool found = false, any = false;
    int rc;

    memset(out, 0, sizeof(*out));
    if ((rc = read_release(r, suite, &files, &n, err)) < 0)
        return -1;
    for (size_t i = 0; rc == 0 && !found && i < n; i++) {
        _cleanup_bytes_ rs_bytes text = { 0 };

        if (!is_packages_for(files[i].path, arch))
            continue;
        any = true;
        rc = read_index(r, suite, &files[i], &text, err);
        if (rc == 0)
            rc = rs_packages_find((const char *)text.data, text.len, package, version, arch, out, &found, err);
    }
    rs_release_files_free(files, n);
    if (rc < 0)
        return -1;
    if (!any)
        return rs_fail(err, "suite %s has no uncompressed Packages index for %s", suite, arch);
    if (!found)
        return rs_fail(err, "%s %s (%s) is not in suite %s", package, version, arch, suite);
    return 0;
}

static int copy_hashing(int in, rs_output *out, EVP_MD_CTX *ctx, uint64_t limit, uint64_t *total, rs_error *err)
{
    uint8_t buf[65536];
    ssize_t n;

    *total = 0;
    while ((n = read(in, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return rs_fail(err, "read: %s", strerror(errno));
        *total += (uint64_t)n;
        if (*total > limit)
            return rs_fail(err, "larger than the %llu bytes its Packages entry lists", (unsigned long long)limit);
        if (!EVP_DigestUpdate(ctx, buf, (size_t)n) || rs_output_write(out, buf, (size_t)n, err) < 0)
            return err->msg[0] ? -1 : rs_fail_ssl(err, "SHA-256");
    }
    return 0;
}

int rs_repo_fetch(const rs_repo *r, const rs_repo_package *p, const char *dest, rs_error *err)
{
    _cleanup_free_ char *path = NULL;
    _cleanup_close_ int fd = -1;
    _cleanup_output_ rs_output out = { .fd = -1 };
    _cleanup_(rs_mdctxp) EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    uint8_t got[32];
    uint64_t total;

    if (!ctx || asprintf(&path, "%s/%s", r->root, p->filename) < 0)
        return rs_fail(err, "out of memory");
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return reachable(path, err) < 0 ? -1 : rs_fail(err, "%s: %s", path, strerror(errno));
    if (!EVP_DigestInit_ex(ctx, EVP_sha256(), NULL))
        return rs_fail_ssl(err, "SHA-256");
    err->msg[0] = '\0';
    if (rs_output_open(&out, dest, 0644, err) < 0 || copy_hashing(fd, &out, ctx, p->size, &total, err) < 0)
        return rs_error_prefix(err, "%s", path);
    if (!EVP_DigestFinal_ex(ctx, got, NULL))
        return rs_fail_ssl(err, "SHA-256");
    if (total != p->size || memcmp(got, p->sha256, 32) != 0)
        return rs_fail(err, "%s: does not match the size and SHA-256 in the Packages index; refusing to read it", path);
    return rs_output_commit(&out, err);
}

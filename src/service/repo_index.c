/* The indices of a repository (repo.h): a Release file's checksums and the
 * stanzas of a Packages file. Untrusted text, fuzzed (fuzz_archive_meta). */
#include "service/repo.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/files_json.h"

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

        if (!rs_deb822_blank(line, len)) {
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

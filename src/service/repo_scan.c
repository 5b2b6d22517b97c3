/* Finding a package in a Packages index (repo_scan.h) through a fixed
 * buffer: an archive's index runs to hundreds of MB. The file is hashed
 * as it is read and parsed one paragraph at a time; what it finds counts
 * only once the whole file has the size and SHA-256 its Release file
 * lists. */
#include "service/repo_scan.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "crypto/ossl.h"

/* A stanza is a few KiB (its Description the longest part); far more is
 * not a Packages file. */
#define MAX_PARAGRAPH (1024 * 1024)

typedef struct scan {
    const char *package, *version, *arch;
    rs_repo_package *out;
    bool found;
    rs_bytes para;        /* the paragraph being read, up to a partial line */
    size_t scanned;       /* where the next unsplit line of para starts */
    size_t line, para_line;
    int rc;               /* the first parse error, in perr */
    rs_error perr;
} scan;

/* After the first match, later paragraphs are only parsed, as the
 * whole-text parser (rs_packages_find) would: the first match counts. */
static void parse_paragraph(scan *s, size_t len)
{
    const char *text = (const char *)s->para.data;
    rs_deb822 *paras = NULL;
    size_t n = 0;
    bool found;

    if (s->found) {
        if (rs_deb822_parse(text, len, &paras, &n, &s->perr) < 0)
            s->rc = rs_error_prefix(&s->perr, "the paragraph at line %zu", s->para_line);
        rs_deb822_free(paras, n);
    } else if (rs_packages_find(text, len, s->package, s->version, s->arch, s->out, &found, &s->perr) < 0)
        s->rc = rs_error_prefix(&s->perr, "the paragraph at line %zu", s->para_line);
    else
        s->found = found;
}

/* Parses para[0, len) and keeps what follows it. */
static void end_paragraph(scan *s, size_t len)
{
    if (s->rc == 0 && len > MAX_PARAGRAPH)
        s->rc = rs_fail(&s->perr, "the paragraph at line %zu is over %d bytes", s->para_line, MAX_PARAGRAPH);
    else if (s->rc == 0 && len)
        parse_paragraph(s, len);
    if (s->para.len > len)
        memmove(s->para.data, s->para.data + len, s->para.len - len);
    s->para.len -= len;
    s->scanned = 0;
    s->para_line = s->line + 1;
}

static void split_lines(scan *s)
{
    uint8_t *nl;

    while ((nl = memchr(s->para.data + s->scanned, '\n', s->para.len - s->scanned))) {
        size_t start = s->scanned, end = (size_t)(nl - s->para.data);

        s->line++;
        s->scanned = end + 1;
        if (rs_deb822_blank((const char *)s->para.data + start, end - start))
            end_paragraph(s, end + 1);
    }
}

static int feed(scan *s, const uint8_t *data, size_t len, rs_error *err)
{
    if (s->rc < 0)
        return 0;
    if (rs_bytes_append(&s->para, data, len, err) < 0)
        return -1;
    split_lines(s);
    if (s->para.len > MAX_PARAGRAPH) {
        s->rc = rs_fail(&s->perr, "the paragraph at line %zu is over %d bytes", s->para_line, MAX_PARAGRAPH);
        s->para.len = 0;
    }
    return 0;
}

static int read_all(const rs_input *in, scan *s, EVP_MD_CTX *md, rs_error *err)
{
    _cleanup_free_ uint8_t *buf = malloc(RS_FILE_CHUNK);

    if (!buf)
        return rs_fail(err, "out of memory");
    for (uint64_t off = 0; off < in->size;) {
        size_t n = in->size - off > RS_FILE_CHUNK ? RS_FILE_CHUNK : (size_t)(in->size - off);

        if (rs_input_read(in, off, buf, n, err) < 0)
            return -1;
        if (!EVP_DigestUpdate(md, buf, n))
            return rs_fail_ssl(err, "SHA-256");
        if (feed(s, buf, n, err) < 0)
            return -1;
        off += n;
    }
    end_paragraph(s, s->para.len);
    return 0;
}

static int scan_file(const char *path, const rs_release_file *f, scan *s, rs_error *err)
{
    _cleanup_input_ rs_input in = { .fd = -1 };
    _cleanup_(rs_mdctxp) EVP_MD_CTX *md = EVP_MD_CTX_new();
    uint8_t got[32];

    if (!md || !EVP_DigestInit_ex(md, EVP_sha256(), NULL))
        return rs_fail_ssl(err, "SHA-256");
    if (rs_input_open(&in, path, err) < 0)
        return -1;
    if (in.size != f->size)
        return rs_fail(err, "does not match the size and SHA-256 its Release file lists");
    if (read_all(&in, s, md, err) < 0)
        return -1;
    if (!EVP_DigestFinal_ex(md, got, NULL))
        return rs_fail_ssl(err, "SHA-256");
    if (memcmp(got, f->sha256, 32) != 0)
        return rs_fail(err, "does not match the size and SHA-256 its Release file lists");
    if (s->rc < 0)
        return rs_fail(err, "%s", s->perr.msg);
    return 0;
}

int rs_packages_scan(const char *path, const rs_release_file *f, const char *package, const char *version,
                     const char *arch, rs_repo_package *out, bool *found, rs_error *err)
{
    scan s = { .package = package, .version = version, .arch = arch, .out = out, .para_line = 1 };
    int rc;

    memset(out, 0, sizeof(*out));
    rc = scan_file(path, f, &s, err);
    rs_bytes_free(&s.para);
    if (rc < 0 && s.found)
        rs_repo_package_free(out);
    *found = rc == 0 && s.found;
    return rc < 0 ? rs_error_prefix(err, "%s", path) : 0;
}

#include "pipeline/template.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "pipeline/deb.h"

/* Limits sized from bookworm's five signing templates (2025): */
/* The first entry of debian/changelog, all that is parsed (the rest is
 * never read): linux's longest entries are ~200 KB; 8 MiB is 40 times. */
#define MAX_CHANGELOG_ENTRY (8 * 1024 * 1024)
/* debian/control: linux-image-6.12's is 27 KB; 4 MiB is 150 times. */
#define MAX_CONTROL_TEXT (4 * 1024 * 1024)
/* The whole source-template/: linux-image-6.12's is 7 MB in 691 files
 * and 8 symlinks; 512 MiB is 70 times the bytes, 100,000 entries 140
 * times the count, and both far below what fills a disk. */
static const rs_extract_limits source_template_limits = { 512ull * 1024 * 1024, 100000 };

void rs_template_free(rs_template *t)
{
    rs_files_json_free(&t->files);
    free(t->package);
    free(t->version);
    free(t->source);
    free(t->source_dir);
    free(t->source_name);
    free(t->source_version);
    memset(t, 0, sizeof(*t));
}

/* files.json read as a stream from fd, after its size is checked. */
static int read_files_json(rs_template *t, int fd, uint64_t size, rs_error *err)
{
    if (size > RS_MAX_FILES_JSON)
        return rs_fail(err, "%llu bytes, over the limit of %d for files.json", (unsigned long long)size,
                       RS_MAX_FILES_JSON);
    if (lseek(fd, 0, SEEK_SET) < 0)
        return rs_fail(err, "%s", strerror(errno));
    return rs_files_json_read(fd, t->files.sink, &t->files, err);
}

/* A .deb template: files.json streamed from the package. */
typedef struct deb_json {
    const char *want;
    rs_template *t;
    bool found;
} deb_json;

static bool want_json(void *ctx, const char *name)
{
    return !strcmp(name, ((deb_json *)ctx)->want);
}

static int take_json(void *ctx, const char *name, int fd, uint64_t size, rs_error *err)
{
    deb_json *d = ctx;
    int rc = read_files_json(d->t, fd, size, err);

    close(fd);
    if (rc < 0)
        return rs_error_prefix(err, "%s", name);
    d->found = true;
    return RS_DEB_STOP;   /* nothing after it is needed */
}

/* usr/share/code-signing/PACKAGE/files.json, streamed from the package. */
static int read_deb_files_json(rs_template *t, const char *path, rs_error *err)
{
    _cleanup_free_ char *json_path = NULL;
    deb_json d = { .t = t };
    int rc;

    if (asprintf(&json_path, "usr/share/code-signing/%s/files.json", t->package) < 0)
        return rs_fail(err, "out of memory");
    d.want = json_path;
    rc = rs_deb_stream(path, want_json, take_json, &d, err);
    if (rc == 0 && !d.found)
        rc = rs_fail(err, "no %s in the package", json_path);
    return rc < 0 ? rs_error_prefix(err, "%s", path) : 0;
}

/* usr/share/code-signing/PACKAGE/source-template/, extracted into
 * WORKDIR/source-template; kept only when it holds anything. */
static int extract_source_template(rs_template *t, const char *path, const char *workdir, rs_error *err)
{
    _cleanup_free_ char *prefix = NULL, *dest = NULL;
    struct stat st;

    if (asprintf(&prefix, "usr/share/code-signing/%s/source-template", t->package) < 0) {
        prefix = NULL;   /* asprintf leaves it undefined: the cleanup would free it again */
        return rs_fail(err, "out of memory");
    }
    if (asprintf(&dest, "%s/source-template", workdir) < 0) {
        dest = NULL;
        return rs_fail(err, "out of memory");
    }
    if (mkdir(dest, 0755) < 0)
        return rs_fail(err, "%s: %s", dest, strerror(errno));
    if (rs_deb_extract_tree(path, prefix, dest, &source_template_limits, err) < 0)
        return rs_error_prefix(err, "%s", path);
    if (stat(dest, &st) == 0 && st.st_nlink > 2)   /* has subdirectories: not empty */
        t->source_dir = TAKE_PTR(dest);
    return 0;
}

static int load_deb(rs_template *t, const char *path, const char *workdir, rs_error *err)
{
    rs_deb_control c;

    if (rs_deb_read_control(path, &c, err) < 0)
        return rs_error_prefix(err, "%s", path);
    t->package = TAKE_PTR(c.package);
    t->version = TAKE_PTR(c.version);
    t->source = TAKE_PTR(c.source);
    rs_deb_control_free(&c);
    if (read_deb_files_json(t, path, err) < 0)
        return -1;
    return extract_source_template(t, path, workdir, err);
}

static int load_json_file(rs_template *t, const char *path, rs_error *err)
{
    _cleanup_input_ rs_input in = { .fd = -1 };

    if (rs_input_open(&in, path, err) < 0 || read_files_json(t, in.fd, in.size, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

/* An unpacked template: either the code-signing directory itself (with
 * files.json) or a package root holding usr/share/code-signing/NAME/. */
static int find_signing_dir(const char *root, char **dir, rs_error *err)
{
    _cleanup_free_ char *direct = NULL, *base = NULL;
    struct stat st;
    int n = 0;

    if (asprintf(&direct, "%s/files.json", root) < 0 || asprintf(&base, "%s/usr/share/code-signing", root) < 0)
        return rs_fail(err, "out of memory");
    if (stat(direct, &st) == 0) {
        *dir = strdup(root);
        return *dir ? 0 : rs_fail(err, "out of memory");
    }
    _cleanup_(rs_closedirp) DIR *d = opendir(base);
    struct dirent *e;

    if (!d)
        return rs_fail(err, "%s: no files.json and no usr/share/code-signing/", root);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        free(*dir);
        if (!(*dir = rs_path_join(base, e->d_name)))
            return rs_fail(err, "out of memory");
        n++;
    }
    if (n != 1)
        return rs_fail(err, "%s: expected exactly one template under usr/share/code-signing/ (found %d)", root, n);
    return 0;
}

static int load_dir(rs_template *t, const char *root, rs_error *err)
{
    _cleanup_free_ char *dir = NULL, *json = NULL, *src = NULL;
    struct stat st;

    if (find_signing_dir(root, &dir, err) < 0)
        return -1;
    if (asprintf(&json, "%s/files.json", dir) < 0 || asprintf(&src, "%s/source-template", dir) < 0)
        return rs_fail(err, "out of memory");
    if (load_json_file(t, json, err) < 0)
        return -1;
    if (stat(src, &st) == 0 && S_ISDIR(st.st_mode))
        t->source_dir = TAKE_PTR(src);
    return 0;
}

/* Debian policy 5.6.12: [epoch:]upstream[-revision] in [A-Za-z0-9.+~:-]. */
static bool valid_version(const char *v)
{
    return v[0] && strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.+~:-") == strlen(v);
}

/* Reads debian/changelog up to the end of its first entry's trailer
 * line: a changelog of any length is read only that far. */
static int read_first_entry(const char *path, rs_bytes *out, rs_error *err)
{
    _cleanup_fclose_ FILE *f = fopen(path, "re");
    _cleanup_free_ char *line = NULL;
    size_t cap = 0;
    ssize_t n;

    if (!f)
        return rs_fail(err, "%s", strerror(errno));
    while ((n = getline(&line, &cap, f)) > 0) {
        if (out->len + (size_t)n > MAX_CHANGELOG_ENTRY)
            return rs_fail(err, "the first entry is over the limit of %d bytes", MAX_CHANGELOG_ENTRY);
        if (rs_bytes_append(out, line, (size_t)n, err) < 0)
            return -1;
        if (!strncmp(line, " -- ", 4))
            break;
    }
    if (ferror(f))
        return rs_fail(err, "%s", strerror(errno));
    return rs_bytes_append(out, "", 1, err);
}

static int read_source_changelog(rs_template *t, rs_error *err)
{
    _cleanup_free_ char *path = NULL;
    _cleanup_bytes_ rs_bytes buf = { 0 };

    if (!t->source_dir)
        return 0;
    if (asprintf(&path, "%s/debian/changelog", t->source_dir) < 0)
        return rs_fail(err, "out of memory");
    if (read_first_entry(path, &buf, err) < 0)
        return rs_error_prefix(err, "source-template/debian/changelog");
    if (rs_changelog_parse((const char *)buf.data, &t->source_name, &t->source_version, &t->changelog_time, err) < 0)
        return rs_error_prefix(err, "source-template/debian/changelog");
    /* Both name the source tree written into OUTDIR: a '/' or '..' from
     * the template would write outside it. */
    if (!rs_valid_package_name(t->source_name))
        return rs_fail(err, "source-template/debian/changelog: invalid source package name '%s'", t->source_name);
    if (!valid_version(t->source_version))
        return rs_fail(err, "source-template/debian/changelog: invalid version '%s'", t->source_version);
    return 0;
}

static bool is_dir(const char *spec, const struct stat *st)
{
    (void)spec;
    return S_ISDIR(st->st_mode);
}

static bool is_deb(const char *spec, const struct stat *st)
{
    return S_ISREG(st->st_mode) && rs_deb_has_magic(spec);
}

static bool is_anything(const char *spec, const struct stat *st)
{
    (void)spec, (void)st;
    return true;
}

static int load_json(rs_template *t, const char *spec, const char *workdir, rs_error *err)
{
    (void)workdir;
    return load_json_file(t, spec, err);
}

static int load_root(rs_template *t, const char *spec, const char *workdir, rs_error *err)
{
    (void)workdir;
    return load_dir(t, spec, err);
}

/* The forms a template comes in, asked in turn: the first that claims
 * the spec loads it. */
static const struct template_form {
    bool (*claims)(const char *spec, const struct stat *st);
    int (*load)(rs_template *t, const char *spec, const char *workdir, rs_error *err);
} forms[] = {
    { is_dir, load_root },
    { is_deb, load_deb },
    { is_anything, load_json },   /* a bare files.json */
};

int rs_template_load(const char *spec, const char *workdir, const rs_files_json_sink *sink, rs_template *t,
                     rs_error *err)
{
    const struct template_form *form = forms;
    struct stat st;
    int rc;

    memset(t, 0, sizeof(*t));
    t->files.sink = sink;
    if (stat(spec, &st) < 0)
        return rs_fail(err, "%s: %s", spec, strerror(errno));
    while (!form->claims(spec, &st))
        form++;
    /* Each form names the file it failed on; the changelog is named
     * inside the template. */
    rc = form->load(t, spec, workdir, err);
    if (rc == 0 && read_source_changelog(t, err) < 0)
        rc = rs_error_prefix(err, "%s", spec);
    if (rc < 0)
        rs_template_free(t);
    return rc;
}

/* Finds "package (= version)" in the control file's Build-Depends. */
static char *pinned_version(const char *control, const char *package)
{
    size_t n = strlen(package);

    for (const char *p = strstr(control, package); p; p = strstr(p + 1, package)) {
        const char *q = p + n;
        const char *end;

        if ((p != control && !strchr(" ,\n\t", p[-1])) || strncmp(q, " (= ", 4) != 0)
            continue;
        q += 4;
        end = strchr(q, ')');
        if (end && end > q)
            return strndup(q, (size_t)(end - q));
    }
    return NULL;
}

const char *rs_template_wanted_version(const rs_template *t, const char *package, char **owned)
{
    _cleanup_free_ char *path = NULL;
    _cleanup_bytes_ rs_bytes buf = { 0 };

    *owned = NULL;
    if (t->source_dir && asprintf(&path, "%s/debian/control", t->source_dir) >= 0 &&
        rs_read_file(path, MAX_CONTROL_TEXT, &buf, NULL) == 0 && rs_bytes_append(&buf, "", 1, NULL) == 0)
        *owned = pinned_version((const char *)buf.data, package);
    return *owned ? *owned : t->version;
}

int rs_changelog_parse(const char *text, char **name, char **version, time_t *when, rs_error *err)
{
    const char *open = strchr(text, '('), *close = open ? strchr(open, ')') : NULL;
    const char *sig = strstr(text, "\n -- ");
    struct tm tm;

    *when = 0;
    if (!open || !close || open == text || open[-1] != ' ' || close - open < 2)
        return rs_fail(err, "first line is not 'name (version) ...'");
    *name = strndup(text, (size_t)(open - 1 - text));
    *version = strndup(open + 1, (size_t)(close - open - 1));
    if (!*name || !*version)
        return rs_fail(err, "out of memory");
    if (sig) {
        const char *date = strstr(sig, ">  ");
        const char *eol = date ? strchr(date, '\n') : NULL;
        char buf[64];

        memset(&tm, 0, sizeof(tm));
        if (date && (!eol || eol - date < (long)sizeof(buf))) {
            snprintf(buf, sizeof(buf), "%.*s", eol ? (int)(eol - date - 3) : 60, date + 3);
            char *rest = strptime(buf, "%a, %d %b %Y %H:%M:%S %z", &tm);

            if (rest) {
                long offset = tm.tm_gmtoff;   /* timegm() resets it */

                *when = timegm(&tm) - offset;
            }
        }
    }
    return 0;
}

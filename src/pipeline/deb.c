#include "pipeline/deb.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "pipeline/archive_lib.h"
#include "base/file.h"
#include "pipeline/files_json.h"

#define BLOCK (64 * 1024)
#define MAX_CONTROL (1024 * 1024)
/* Larger than any EFI binary or module; bounds memory for hostile sizes. */
#define MAX_MEMBER_FILE (512ull * 1024 * 1024)

static void archive_freep(struct archive **a)
{
    if (*a)
        sym_archive_read_free(*a);
}
#define _cleanup_archive_ _cleanup_(archive_freep)

void rs_deb_normalise(char *name)
{
    size_t n;

    while (name[0] == '.' && name[1] == '/')
        memmove(name, name + 2, strlen(name + 2) + 1);
    while (name[0] == '/')
        memmove(name, name + 1, strlen(name + 1) + 1);
    n = strlen(name);
    while (n && name[n - 1] == '/')
        name[--n] = '\0';
}

static int archive_fail(rs_error *err, struct archive *a, const char *what)
{
    const char *why = sym_archive_error_string(a);

    return rs_fail(err, "%s: %s", what, why ? why : "archive error");
}

static struct archive *open_ar(const char *path, rs_error *err)
{
    struct archive *a;

    if (rs_archive_load(err) < 0)
        return NULL;
    a = sym_archive_read_new();
    if (!a)
        return rs_fail(err, "out of memory"), NULL;
    sym_archive_read_support_format_ar(a);
    if (sym_archive_read_open_filename(a, path, BLOCK) != ARCHIVE_OK) {
        archive_fail(err, a, "not a Debian package");
        sym_archive_read_free(a);
        return NULL;
    }
    return a;
}

/* The nested tarball reads straight from the ar member's data. */
static la_ssize_t member_read(struct archive *inner, void *outer, const void **buf)
{
    size_t size = 0;
    la_int64_t offset;
    int rc = sym_archive_read_data_block(outer, buf, &size, &offset);

    (void)inner;
    if (rc == ARCHIVE_EOF)
        return 0;
    return rc == ARCHIVE_OK ? (la_ssize_t)size : -1;
}

/* Positions `outer` at the member whose name starts with prefix ("data.tar",
 * "control.tar") and opens it as a tarball compressed as dpkg allows. */
static struct archive *open_member_tar(struct archive *outer, const char *prefix, rs_error *err)
{
    struct archive_entry *e;
    struct archive *inner;
    int rc;

    while ((rc = sym_archive_read_next_header(outer, &e)) == ARCHIVE_OK) {
        const char *name = sym_archive_entry_pathname(e);

        if (name && !strncmp(name, prefix, strlen(prefix)))
            break;
    }
    if (rc != ARCHIVE_OK)
        return rc == ARCHIVE_EOF ? (rs_fail(err, "no %s member: not a Debian package", prefix), NULL)
                                 : (archive_fail(err, outer, "not a Debian package"), NULL);
    inner = sym_archive_read_new();
    if (!inner)
        return rs_fail(err, "out of memory"), NULL;
    /* dpkg's compressors only: "all" includes filters that run an
     * external program (lzop, lrzip, grzip) on the package's bytes. */
    sym_archive_read_support_filter_gzip(inner);
    sym_archive_read_support_filter_xz(inner);
    sym_archive_read_support_filter_zstd(inner);
    sym_archive_read_support_filter_bzip2(inner);
    sym_archive_read_support_filter_lzma(inner);
    sym_archive_read_support_format_tar(inner);
    if (sym_archive_read_open(inner, outer, NULL, member_read, NULL) != ARCHIVE_OK) {
        archive_fail(err, inner, prefix);
        sym_archive_read_free(inner);
        return NULL;
    }
    return inner;
}

/* Calls fn for every entry of the data tarball, with its normalised
 * name; fn may read the entry's data. Stops at fn's first failure, or
 * when fn returns RS_DEB_STOP (then returns RS_DEB_STOP). */
typedef int (*entry_fn)(void *ctx, struct archive *data, struct archive_entry *e, const char *name, rs_error *err);

static int walk_data(const char *path, entry_fn fn, void *ctx, rs_error *err)
{
    _cleanup_archive_ struct archive *ar = open_ar(path, err);
    _cleanup_archive_ struct archive *data = NULL;
    struct archive_entry *e;
    int rc;

    if (!ar || !(data = open_member_tar(ar, "data.tar", err)))
        return -1;
    while ((rc = sym_archive_read_next_header(data, &e)) == ARCHIVE_OK) {
        _cleanup_free_ char *name = strdup(sym_archive_entry_pathname(e) ? sym_archive_entry_pathname(e) : "");

        if (!name)
            return rs_fail(err, "out of memory");
        rs_deb_normalise(name);
        if ((rc = fn(ctx, data, e, name, err)) != 0)
            return rc < 0 ? -1 : RS_DEB_STOP;
    }
    if (rc != ARCHIVE_EOF)
        return archive_fail(err, data, "corrupt data.tar");
    return 0;
}

void rs_deb_control_free(rs_deb_control *c)
{
    free(c->package);
    free(c->version);
    free(c->architecture);
    free(c->source);
    memset(c, 0, sizeof(*c));
}

/* Value of a single-line "Field: value" in a control paragraph. */
static char *control_field(const char *text, const char *field)
{
    size_t flen = strlen(field);
    const char *line = text;

    while (line && *line) {
        if (!strncasecmp(line, field, flen) && line[flen] == ':') {
            const char *v = line + flen + 1, *end;

            while (*v == ' ' || *v == '\t')
                v++;
            end = strchr(v, '\n');
            end = end ? end : v + strlen(v);
            while (end > v && (end[-1] == ' ' || end[-1] == '\r'))
                end--;
            return strndup(v, (size_t)(end - v));
        }
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    return NULL;
}

static int read_entry_text(struct archive *a, struct archive_entry *e, char **out, rs_error *err)
{
    la_int64_t size = sym_archive_entry_size(e);
    char *buf;
    la_ssize_t n;

    if (size < 0 || size > MAX_CONTROL)
        return rs_fail(err, "control file too large");
    buf = malloc((size_t)size + 1);
    if (!buf)
        return rs_fail(err, "out of memory");
    n = sym_archive_read_data(a, buf, (size_t)size);
    if (n != size) {
        free(buf);
        return archive_fail(err, a, "cannot read control file");
    }
    buf[size] = '\0';
    *out = buf;
    return 0;
}

int rs_deb_read_control(const char *path, rs_deb_control *out, rs_error *err)
{
    _cleanup_archive_ struct archive *ar = open_ar(path, err);
    _cleanup_archive_ struct archive *ctl = NULL;
    _cleanup_free_ char *text = NULL;
    struct archive_entry *e;

    memset(out, 0, sizeof(*out));
    if (!ar || !(ctl = open_member_tar(ar, "control.tar", err)))
        return -1;
    while (sym_archive_read_next_header(ctl, &e) == ARCHIVE_OK) {
        _cleanup_free_ char *name = strdup(sym_archive_entry_pathname(e) ? sym_archive_entry_pathname(e) : "");

        if (!name)
            return rs_fail(err, "out of memory");
        rs_deb_normalise(name);
        if (!strcmp(name, "control")) {
            if (read_entry_text(ctl, e, &text, err) < 0)
                return -1;
            break;
        }
    }
    if (!text)
        return rs_fail(err, "no control file in control.tar");
    out->package = control_field(text, "Package");
    out->version = control_field(text, "Version");
    out->architecture = control_field(text, "Architecture");
    out->source = control_field(text, "Source");
    /* "Source: linux (6.1.76-1)": the version is the binary's own business. */
    if (out->source)
        out->source[strcspn(out->source, " \t")] = '\0';
    else if (out->package)
        out->source = strdup(out->package);
    if (!out->package || !out->version || !out->source || !rs_valid_package_name(out->package) ||
        !rs_valid_package_name(out->source)) {
        rs_deb_control_free(out);
        return rs_fail(err, "control file lacks a valid Package, Source or Version");
    }
    return 0;
}

void rs_deb_index_free(rs_deb_index *idx)
{
    for (size_t i = 0; i < idx->count; i++) {
        free(idx->entries[i].name);
        free(idx->entries[i].link);
    }
    free(idx->entries);
    memset(idx, 0, sizeof(*idx));
}

static rs_node_type entry_type(struct archive_entry *e)
{
    if (sym_archive_entry_hardlink(e))
        return RS_NODE_HARDLINK;
    switch (sym_archive_entry_filetype(e)) {
    case AE_IFREG:
        return RS_NODE_FILE;
    case AE_IFDIR:
        return RS_NODE_DIR;
    case AE_IFLNK:
        return RS_NODE_SYMLINK;
    default:
        return RS_NODE_OTHER;
    }
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const rs_deb_entry *)a)->name, ((const rs_deb_entry *)b)->name);
}

typedef struct index_build {
    rs_deb_index *idx;
    size_t cap;
} index_build;

static int add_entry(void *ctx, struct archive *data, struct archive_entry *e, const char *name, rs_error *err)
{
    index_build *b = ctx;
    rs_deb_index *idx = b->idx;
    const char *link = sym_archive_entry_hardlink(e) ? sym_archive_entry_hardlink(e) : sym_archive_entry_symlink(e);
    rs_deb_entry *x;

    (void)data;
    if (idx->count == b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 256;
        rs_deb_entry *n = realloc(idx->entries, ncap * sizeof(*n));

        if (!n)
            return rs_fail(err, "out of memory");
        idx->entries = n;
        b->cap = ncap;
    }
    x = &idx->entries[idx->count];
    memset(x, 0, sizeof(*x));
    x->name = strdup(name);
    x->type = entry_type(e);
    x->size = sym_archive_entry_size(e) > 0 ? (uint64_t)sym_archive_entry_size(e) : 0;
    x->link = link ? strdup(link) : NULL;
    if (!x->name || (link && !x->link))
        return rs_fail(err, "out of memory");
    if (x->type == RS_NODE_HARDLINK)
        rs_deb_normalise(x->link);
    idx->count++;
    return 0;
}

/* Sorted for lookups; a name listed twice makes the package unreadable,
 * since which of the two is "the" file would be a guess. */
static int index_finish(rs_deb_index *idx, rs_error *err)
{
    qsort(idx->entries, idx->count, sizeof(*idx->entries), cmp_entry);
    for (size_t i = 1; i < idx->count; i++)
        if (!strcmp(idx->entries[i - 1].name, idx->entries[i].name)) {
            rs_fail(err, "data.tar lists '%s' twice", idx->entries[i].name);
            rs_deb_index_free(idx);
            return -1;
        }
    return 0;
}

int rs_deb_index_read(const char *path, rs_deb_index *out, rs_error *err)
{
    index_build b = { .idx = out };

    memset(out, 0, sizeof(*out));
    if (walk_data(path, add_entry, &b, err) < 0) {
        rs_deb_index_free(out);
        return -1;
    }
    if (index_finish(out, err) < 0)
        return -1;
    out->complete = true;
    return 0;
}

const rs_deb_entry *rs_deb_index_find(const rs_deb_index *idx, const char *name)
{
    rs_deb_entry key = { .name = (char *)name };

    return bsearch(&key, idx->entries, idx->count, sizeof(key), cmp_entry);
}

/* Copies the current entry's data into fd, up to `limit` bytes. */
static int copy_data(struct archive *a, int fd, uint64_t limit, uint64_t *size, rs_error *err)
{
    const void *buf;
    size_t len;
    la_int64_t off;
    int rc;

    *size = 0;
    while ((rc = sym_archive_read_data_block(a, &buf, &len, &off)) == ARCHIVE_OK) {
        if (off < 0 || (uint64_t)off + len > limit)
            return rs_fail(err, "too large (over %llu bytes)", (unsigned long long)limit);
        if (pwrite(fd, buf, len, off) != (ssize_t)len)
            return rs_fail(err, "cannot buffer file: %s", strerror(errno));
        if ((uint64_t)off + len > *size)
            *size = (uint64_t)off + len;
    }
    if (rc != ARCHIVE_EOF)
        return archive_fail(err, a, "corrupt data.tar");
    return 0;
}

static int entry_to_memfd(struct archive *a, struct archive_entry *e, int *out, uint64_t *size, rs_error *err)
{
    _cleanup_close_ int fd = memfd_create("reprosign", MFD_CLOEXEC | MFD_ALLOW_SEALING);

    if (fd < 0)
        return rs_fail(err, "memfd_create: %s", strerror(errno));
    if (sym_archive_entry_size(e) < 0 || (uint64_t)sym_archive_entry_size(e) > MAX_MEMBER_FILE)
        return rs_fail(err, "too large (over %llu bytes)", MAX_MEMBER_FILE);
    if (copy_data(a, fd, MAX_MEMBER_FILE, size, err) < 0)
        return -1;
    /* What was checked is what gets signed: nobody can change it now. */
    if (ftruncate(fd, (off_t)*size) < 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
        return rs_fail(err, "cannot seal buffered file: %s", strerror(errno));
    *out = TAKE_FD(fd);
    return 0;
}

typedef struct stream {
    rs_deb_want want;
    rs_deb_take take;
    void *ctx;
} stream;

static int stream_entry(void *ctx, struct archive *data, struct archive_entry *e, const char *name, rs_error *err)
{
    stream *st = ctx;
    uint64_t size = 0;
    int fd = -1;

    if (entry_type(e) != RS_NODE_FILE || !st->want(st->ctx, name))
        return 0;
    if (entry_to_memfd(data, e, &fd, &size, err) < 0)
        return rs_error_prefix(err, "%s", name);
    return st->take(st->ctx, name, fd, size, err);
}

int rs_deb_stream(const char *path, rs_deb_want want, rs_deb_take take, void *ctx, rs_error *err)
{
    stream st = { want, take, ctx };

    return walk_data(path, stream_entry, &st, err) < 0 ? -1 : 0;
}

typedef struct indexed_stream {
    index_build b;
    stream st;
} indexed_stream;

static int index_and_stream_entry(void *ctx, struct archive *data, struct archive_entry *e, const char *name,
                                  rs_error *err)
{
    indexed_stream *is = ctx;

    return add_entry(&is->b, data, e, name, err) < 0 ? -1 : stream_entry(&is->st, data, e, name, err);
}

int rs_deb_stream_indexed(const char *path, rs_deb_index *index, rs_deb_want want, rs_deb_take take, void *ctx,
                          rs_error *err)
{
    indexed_stream is = { { .idx = index }, { want, take, ctx } };

    int rc;

    memset(index, 0, sizeof(*index));
    if ((rc = walk_data(path, index_and_stream_entry, &is, err)) < 0) {
        rs_deb_index_free(index);
        return -1;
    }
    if (index_finish(index, err) < 0)
        return -1;
    index->complete = rc != RS_DEB_STOP;
    return 0;
}

/* dest/rel and every directory above it, below dest. */
static int mkdirs(const char *dest, const char *rel, rs_error *err)
{
    _cleanup_free_ char *path = NULL;

    if (asprintf(&path, "%s/%s/", dest, rel) < 0)
        return rs_fail(err, "out of memory");
    return rs_mkdir_parents(path, err);
}

typedef struct extraction {
    const char *prefix;
    const char *dest;
    rs_extract_limits limits;
    rs_extract_limits left;
    char **links;          /* symlinks made so far: nothing is written through one */
    size_t n_links;
} extraction;

static bool below_a_link(const extraction *x, const char *rel)
{
    for (size_t i = 0; i < x->n_links; i++) {
        size_t n = strlen(x->links[i]);

        if (!strncmp(rel, x->links[i], n) && (rel[n] == '/' || rel[n] == '\0'))
            return true;
    }
    return false;
}

/* The target is checked when the tree is copied into the source package
 * (src/pipeline/source_tree.c): only then does every name exist. */
static int extract_symlink(struct archive_entry *e, extraction *x, const char *name, const char *rel, rs_error *err)
{
    _cleanup_free_ char *path = NULL;
    const char *target = sym_archive_entry_symlink(e);
    const char *slash = strrchr(rel, '/');
    char **grown;

    if (!target || !*target)
        return rs_fail(err, "%s: a symlink with an empty target", name);
    if (slash) {
        _cleanup_free_ char *dir = strndup(rel, (size_t)(slash - rel));

        if (!dir || mkdirs(x->dest, dir, err) < 0)
            return -1;
    }
    if (!(grown = realloc(x->links, (x->n_links + 1) * sizeof(*grown))))
        return rs_fail(err, "out of memory");
    x->links = grown;
    if (!(x->links[x->n_links] = strdup(rel)) || asprintf(&path, "%s/%s", x->dest, rel) < 0)
        return rs_fail(err, "out of memory");
    x->n_links++;
    if (symlink(target, path) < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    return 0;
}

static int extract_file(struct archive *a, struct archive_entry *e, extraction *x, const char *rel, rs_error *err)
{
    _cleanup_free_ char *path = NULL;
    _cleanup_close_ int fd = -1;
    mode_t mode = (sym_archive_entry_perm(e) & 0111) ? 0755 : 0644;
    const char *dest = x->dest;
    uint64_t size;
    const char *slash = strrchr(rel, '/');

    if (slash) {
        _cleanup_free_ char *dir = strndup(rel, (size_t)(slash - rel));

        if (!dir || mkdirs(dest, dir, err) < 0)
            return -1;
    }
    if (asprintf(&path, "%s/%s", dest, rel) < 0)
        return rs_fail(err, "out of memory");
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    if (copy_data(a, fd, x->left.bytes, &size, err) < 0)
        return rs_error_prefix(err, "source template: %s", rel);
    x->left.bytes -= size;
    return 0;
}

static int extract_entry(void *ctx, struct archive *data, struct archive_entry *e, const char *name, rs_error *err)
{
    extraction *x = ctx;
    size_t plen = strlen(x->prefix);
    const char *rel;

    if (strncmp(name, x->prefix, plen) != 0 || (name[plen] != '/' && name[plen] != '\0'))
        return 0;
    rel = name[plen] ? name + plen + 1 : "";
    if (!*rel)
        return 0;
    if (!rs_valid_relative_path(rel))
        return rs_fail(err, "%s: unsafe path in the template", name);
    if (x->left.entries-- == 0)
        return rs_fail(err, "%s: the source template has more than %zu entries, the limit", name, x->limits.entries);
    if (below_a_link(x, rel))
        return rs_fail(err, "%s: a path through a symlink in the source template", name);
    switch (entry_type(e)) {
    case RS_NODE_DIR:
        return mkdirs(x->dest, rel, err);
    case RS_NODE_FILE:
        return extract_file(data, e, x, rel, err);
    case RS_NODE_SYMLINK:
        return extract_symlink(e, x, name, rel, err);
    default:
        return rs_fail(err, "%s: hard links and special files are not allowed in a source template", name);
    }
}

int rs_deb_extract_tree(const char *path, const char *prefix, const char *dest, const rs_extract_limits *limits,
                        rs_error *err)
{
    extraction x = { prefix, dest, *limits, *limits, NULL, 0 };
    int rc = walk_data(path, extract_entry, &x, err);

    for (size_t i = 0; i < x.n_links; i++)
        free(x.links[i]);
    free(x.links);
    return rc;
}

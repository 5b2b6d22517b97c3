#include "pipeline/deb.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "pipeline/deb_archive.h"
#include "pipeline/files_json.h"

#define MAX_CONTROL (1024 * 1024)
/* Larger than any EFI binary or module; bounds memory for hostile sizes. */
#define MAX_MEMBER_FILE (512ull * 1024 * 1024)

bool rs_deb_has_magic(const char *path)
{
    char magic[8];
    _cleanup_fclose_ FILE *f = fopen(path, "rbe");

    return f && fread(magic, 1, sizeof(magic), f) == sizeof(magic) && !memcmp(magic, "!<arch>\n", 8);
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
        return rs_archive_fail(err, a, "cannot read control file");
    }
    buf[size] = '\0';
    *out = buf;
    return 0;
}

/* The text of control.tar's control file. */
static int read_control_text(const char *path, char **text, rs_error *err)
{
    _cleanup_archive_ struct archive *ar = rs_deb_open_ar(path, err);
    _cleanup_archive_ struct archive *ctl = NULL;
    struct archive_entry *e;

    if (!ar || !(ctl = rs_deb_open_member_tar(ar, "control.tar", err)))
        return -1;
    while (sym_archive_read_next_header(ctl, &e) == ARCHIVE_OK) {
        _cleanup_free_ char *name = strdup(sym_archive_entry_pathname(e) ? sym_archive_entry_pathname(e) : "");

        if (!name)
            return rs_fail(err, "out of memory");
        rs_deb_normalise(name);
        if (!strcmp(name, "control"))
            return read_entry_text(ctl, e, text, err);
    }
    return rs_fail(err, "no control file in control.tar");
}

int rs_deb_read_control(const char *path, rs_deb_control *out, rs_error *err)
{
    _cleanup_free_ char *text = NULL;

    memset(out, 0, sizeof(*out));
    if (read_control_text(path, &text, err) < 0)
        return -1;
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
    rs_strpool_free(&idx->names);
    free(idx->entries);
    memset(idx, 0, sizeof(*idx));
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
    if (idx->count == RS_DEB_INDEX_MAX_ENTRIES)
        return rs_fail(err, "data.tar lists more than %d entries, the limit", RS_DEB_INDEX_MAX_ENTRIES);
    idx->name_bytes += strlen(name) + 1 + (link ? strlen(link) + 1 : 0);
    if (idx->name_bytes > RS_DEB_INDEX_MAX_NAME_BYTES)
        return rs_fail(err, "data.tar's names take more than %u bytes, the limit", RS_DEB_INDEX_MAX_NAME_BYTES);
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
    x->name = rs_strpool_dup(&idx->names, name);
    x->type = rs_deb_entry_type(e);
    x->size = sym_archive_entry_size(e) > 0 ? (uint64_t)sym_archive_entry_size(e) : 0;
    x->link = link ? rs_strpool_dup(&idx->names, link) : NULL;
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
    /* An empty data.tar has no entries array, and qsort's may not be NULL. */
    if (idx->count)
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
    if (rs_deb_walk_data(path, add_entry, &b, err) < 0) {
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

bool rs_deb_index_has_beneath(const rs_deb_index *idx, const char *name)
{
    size_t n = strlen(name), lo = 0, hi = idx->count;

    /* Names beneath it sort together, from the first not below "name/". */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strncmp(idx->entries[mid].name, name, n);

        if (c < 0 || (c == 0 && (unsigned char)idx->entries[mid].name[n] < '/'))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < idx->count && !strncmp(idx->entries[lo].name, name, n) && idx->entries[lo].name[n] == '/';
}

static int entry_to_memfd(struct archive *a, struct archive_entry *e, int *out, uint64_t *size, rs_error *err)
{
    _cleanup_close_ int fd = memfd_create("reprosign", MFD_CLOEXEC | MFD_ALLOW_SEALING);

    if (fd < 0)
        return rs_fail(err, "memfd_create: %s", strerror(errno));
    if (sym_archive_entry_size(e) < 0 || (uint64_t)sym_archive_entry_size(e) > MAX_MEMBER_FILE)
        return rs_fail(err, "too large (over %llu bytes)", MAX_MEMBER_FILE);
    if (rs_archive_copy_data(a, fd, NULL, MAX_MEMBER_FILE, "data.tar", size, err) < 0)
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

    if (rs_deb_entry_type(e) != RS_NODE_FILE || !st->want(st->ctx, name))
        return 0;
    if (entry_to_memfd(data, e, &fd, &size, err) < 0)
        return rs_error_prefix(err, "%s", name);
    return st->take(st->ctx, name, fd, size, err);
}

int rs_deb_stream(const char *path, rs_deb_want want, rs_deb_take take, void *ctx, rs_error *err)
{
    stream st = { want, take, ctx };

    return rs_deb_walk_data(path, stream_entry, &st, err) < 0 ? -1 : 0;
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
    if ((rc = rs_deb_walk_data(path, index_and_stream_entry, &is, err)) < 0) {
        rs_deb_index_free(index);
        return -1;
    }
    if (index_finish(index, err) < 0)
        return -1;
    index->complete = rc != RS_DEB_STOP;
    return 0;
}

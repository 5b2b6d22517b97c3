#include "archive/archive_read.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "base/file.h"

void rs_archive_freep(struct archive **a)
{
    if (*a)
        sym_archive_read_free(*a);
}

int rs_archive_fail(rs_error *err, struct archive *a, const char *what)
{
    const char *why = sym_archive_error_string(a);

    return rs_fail(err, "%s: %s", what, why ? why : "archive error");
}

int rs_archive_each_block(struct archive *a, uint64_t limit, const char *stream, rs_archive_block_fn fn, void *ctx,
                          uint64_t *size, rs_error *err)
{
    const void *buf;
    size_t len;
    la_int64_t off;
    int rc;

    *size = 0;
    while ((rc = sym_archive_read_data_block(a, &buf, &len, &off)) == ARCHIVE_OK) {
        if (off < 0 || (uint64_t)off + len > limit)
            return rs_fail(err, "too large (over %llu bytes)", (unsigned long long)limit);
        if (fn(ctx, (uint64_t)off, buf, len, err) < 0)
            return -1;
        if ((uint64_t)off + len > *size)
            *size = (uint64_t)off + len;
    }
    if (rc != ARCHIVE_EOF) {
        char what[64];

        snprintf(what, sizeof(what), "corrupt %s", stream);
        return rs_archive_fail(err, a, what);
    }
    return 0;
}

typedef struct copy_target {
    int fd;
    const char *to;
} copy_target;

static int copy_block(void *ctx, uint64_t off, const void *data, size_t len, rs_error *err)
{
    const copy_target *t = ctx;

    if (rs_pwrite_all(t->fd, data, len, (off_t)off) < 0)
        return t->to ? rs_fail_sys(err, errno, "cannot write %s: %s", t->to, strerror(errno))
                     : rs_fail(err, "cannot buffer file: %s", strerror(errno));
    return 0;
}

int rs_archive_copy_data(struct archive *a, int fd, const char *to, uint64_t limit, const char *stream, uint64_t *size,
                         rs_error *err)
{
    copy_target t = { fd, to };

    return rs_archive_each_block(a, limit, stream, copy_block, &t, size, err);
}

/* The nested tarball reads straight from the outer entry's data. */
static la_ssize_t entry_read(struct archive *inner, void *outer, const void **buf)
{
    size_t size = 0;
    la_int64_t offset;
    int rc = sym_archive_read_data_block(outer, buf, &size, &offset);

    (void)inner;
    if (rc == ARCHIVE_EOF)
        return 0;
    return rc == ARCHIVE_OK ? (la_ssize_t)size : -1;
}

struct archive *rs_archive_open_entry_tar(struct archive *outer, const char *what, rs_error *err)
{
    struct archive *inner = sym_archive_read_new();

    if (!inner)
        return rs_fail(err, "out of memory"), NULL;
    sym_archive_read_support_filter_gzip(inner);
    sym_archive_read_support_filter_xz(inner);
    sym_archive_read_support_filter_zstd(inner);
    sym_archive_read_support_filter_bzip2(inner);
    sym_archive_read_support_filter_lzma(inner);
    sym_archive_read_support_format_tar(inner);
    if (sym_archive_read_open(inner, outer, NULL, entry_read, NULL) != ARCHIVE_OK) {
        rs_archive_fail(err, inner, what);
        sym_archive_read_free(inner);
        return NULL;
    }
    return inner;
}

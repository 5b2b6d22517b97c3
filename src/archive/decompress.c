#include "archive/decompress.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "archive/archive_read.h"
#include "base/cleanup.h"
#include "base/file.h"

#define BLOCK (64 * 1024)

bool rs_is_compressed_module_name(const char *name)
{
    return rs_name_has_suffix(name, ".ko.xz") || rs_name_has_suffix(name, ".ko.zst") ||
           rs_name_has_suffix(name, ".ko.gz");
}

/* libarchive reads the compressed bytes from [pos, end) of the input, a
 * block at a time. */
typedef struct range_reader {
    const rs_input *in;
    uint64_t pos, end;
    rs_error err;                /* why a read failed, for the caller */
    bool failed;
    uint8_t buf[BLOCK];
} range_reader;

static la_ssize_t range_read(struct archive *a, void *ctx, const void **buf)
{
    range_reader *r = ctx;
    size_t n = r->end - r->pos < BLOCK ? (size_t)(r->end - r->pos) : BLOCK;

    (void)a;
    *buf = r->buf;
    if (n && rs_input_read(r->in, r->pos, r->buf, n, &r->err) < 0) {
        r->failed = true;
        return -1;
    }
    r->pos += n;
    return (la_ssize_t)n;
}

/* Opens the compressed stream at r's range; the raw format's one entry
 * is the decompressed stream. as_named ends the message for bytes that
 * are not compressed at all; given plain, they set it instead, with no
 * error. */
static struct archive *open_range(range_reader *r, const char *as_named, bool *plain, rs_error *err)
{
    const rs_input *in = r->in;
    struct archive *a;
    struct archive_entry *e;

    if (r->pos > in->size || r->end - r->pos > in->size - r->pos)
        return rs_fail(err, "%s: the compressed stream [%llu, +%llu) lies outside the file's %llu bytes", in->path,
                       (unsigned long long)r->pos, (unsigned long long)(r->end - r->pos),
                       (unsigned long long)in->size), NULL;
    if (rs_archive_load(err) < 0)
        return rs_error_prefix(err, "%s", in->path), NULL;
    a = sym_archive_read_new();
    if (!a)
        return rs_fail(err, "%s: out of memory", in->path), NULL;
    sym_archive_read_support_filter_xz(a);
    sym_archive_read_support_filter_zstd(a);
    sym_archive_read_support_filter_gzip(a);
    sym_archive_read_support_format_raw(a);
    /* From here on, what fails is the data (or the read of it). */
    if (sym_archive_read_open(a, r, NULL, range_read, NULL) != ARCHIVE_OK ||
        sym_archive_read_next_header(a, &e) != ARCHIVE_OK) {
        if (r->failed)
            rs_fail(err, "%s: %s", in->path, r->err.msg);
        else {
            rs_archive_fail(err, a, "corrupt stream");
            rs_error_prefix(err, "%s: decompressed", in->path);
        }
        sym_archive_read_free(a);
        return NULL;
    }
    /* Filter 0 is the last one applied; "none" means the bytes are as stored. */
    if (sym_archive_filter_code(a, 0) == ARCHIVE_FILTER_NONE) {
        if (plain)
            *plain = true;
        else
            rs_fail(err, "%s: not compressed with xz, zstd or gzip%s", in->path, as_named);
        sym_archive_read_free(a);
        return NULL;
    }
    return a;
}

/* A failed read of the input says so; anything else is the stream's. */
static int stream_failed(const range_reader *r, rs_error *err)
{
    if (r->failed)
        return rs_fail(err, "%s: %s", r->in->path, r->err.msg);
    return rs_error_prefix(err, "%s: decompressed", r->in->path);
}

/* Decompresses r's range into a new sealed memfd. */
static int range_to_memfd(range_reader *r, const char *as_named, bool *plain, uint64_t limit, int *out, uint64_t *size,
                          rs_error *err)
{
    const char *path = r->in->path;
    _cleanup_close_ int fd = -1;
    _cleanup_(rs_archive_freep) struct archive *a = NULL;   /* freed first: it reads through r */

    if (!(a = open_range(r, as_named, plain, err)))
        return plain && *plain ? 0 : -1;
    fd = memfd_create("reprosign-decompressed", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return rs_fail(err, "%s: memfd_create: %s", path, strerror(errno));
    if (rs_archive_copy_data(a, fd, NULL, limit, "stream", size, err) < 0)
        return stream_failed(r, err);
    /* What was checked is what was decompressed: nobody can change it now. */
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
        return rs_fail(err, "%s: cannot seal the decompressed file: %s", path, strerror(errno));
    *out = TAKE_FD(fd);
    return 0;
}

int rs_decompress_to_memfd(const char *path, uint64_t limit, int *out, uint64_t *size, rs_error *err)
{
    _cleanup_input_ rs_input in = { .fd = -1 };
    _cleanup_free_ range_reader *r = calloc(1, sizeof(*r));

    if (!r)
        return rs_fail(err, "%s: out of memory", path);
    if (rs_input_open(&in, path, err) < 0)
        return rs_error_prefix(err, "%s", path);
    *r = (range_reader){ .in = &in, .pos = 0, .end = in.size };
    /* A module's name says how it is compressed. */
    return range_to_memfd(r, ", as its name says", NULL, limit, out, size, err);
}

int rs_decompress_input_to_memfd(const rs_input *in, uint64_t limit, int *out, uint64_t *size, rs_error *err)
{
    _cleanup_free_ range_reader *r = calloc(1, sizeof(*r));
    bool plain = false;

    if (!r)
        return rs_fail(err, "%s: out of memory", in->path);
    *r = (range_reader){ .in = in, .pos = 0, .end = in->size };
    if (range_to_memfd(r, "", &plain, limit, out, size, err) < 0)
        return -1;
    return plain ? RS_NOT_COMPRESSED : 0;
}

typedef struct in_order {
    rs_decompress_fn fn;
    void *ctx;
    uint64_t next;
} in_order;

/* The raw format gives the stream in order; a gap would be a defect in it. */
static int give_in_order(void *ctx, uint64_t off, const void *data, size_t len, rs_error *err)
{
    in_order *o = ctx;

    if (off != o->next)
        return rs_fail(err, "corrupt stream: a block at %llu where %llu was expected", (unsigned long long)off,
                       (unsigned long long)o->next);
    o->next += len;
    return o->fn(o->ctx, data, len, err);
}

int rs_decompress_range_each(const rs_input *in, uint64_t off, uint64_t len, uint64_t limit, rs_decompress_fn fn,
                             void *ctx, uint64_t *size, rs_error *err)
{
    _cleanup_free_ range_reader *r = calloc(1, sizeof(*r));
    _cleanup_(rs_archive_freep) struct archive *a = NULL;   /* freed first: it reads through r */
    in_order o = { fn, ctx, 0 };

    if (!r)
        return rs_fail(err, "%s: out of memory", in->path);
    *r = (range_reader){ .in = in, .pos = off, .end = off > UINT64_MAX - len ? UINT64_MAX : off + len };
    if (!(a = open_range(r, "", NULL, err)))
        return -1;
    if (rs_archive_each_block(a, limit, "stream", give_in_order, &o, size, err) < 0)
        return stream_failed(r, err);
    return 0;
}

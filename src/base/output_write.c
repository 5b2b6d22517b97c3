/* Writing to outputs (file.h): the one write loop, copies by the kernel
 * where it can, and whole files written or copied at once. output.c makes,
 * commits and removes the temporaries these fill. */
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"

/* copy_file_range in steps of this much, so a signal is seen between them. */
#define RS_COPY_CHUNK (64u << 20)

/* The one write loop: at the file position when off is negative, else at
 * off. A short write is retried for the rest, so a failure reports the
 * errno of the write that failed rather than whatever errno held before. */
static int write_loop(int fd, const void *data, size_t len, off_t off)
{
    const uint8_t *p = data;

    while (len) {
        ssize_t n = off < 0 ? write(fd, p, len) : pwrite(fd, p, len, off);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        p += n;
        len -= (size_t)n;
        if (off >= 0)
            off += n;
    }
    return 0;
}

int rs_write_all(int fd, const void *data, size_t len)
{
    return write_loop(fd, data, len, -1);
}

int rs_pwrite_all(int fd, const void *data, size_t len, off_t off)
{
    return off < 0 ? (errno = EINVAL, -1) : write_loop(fd, data, len, off);
}

int rs_output_write(rs_output *out, const void *data, size_t len, rs_error *err)
{
    if (out->observe && len)
        out->observe(out->observe_ctx, data, len);
    if (rs_write_all(out->fd, data, len) < 0)
        return rs_fail_sys(err, errno, "write failed: %s", strerror(errno));
    out->written += len;
    return 0;
}

int rs_output_zeros(rs_output *out, uint64_t len, rs_error *err)
{
    static const uint8_t zeros[4096];

    while (len) {
        size_t n = len > sizeof(zeros) ? sizeof(zeros) : (size_t)len;

        if (rs_output_write(out, zeros, n, err) < 0)
            return -1;
        len -= n;
    }
    return 0;
}

/* The kernel copies [*off, *off+*len) from the page cache, so the bytes
 * hashed a moment ago are not read through this process a second time.
 * Stops early, with no error, where the file systems cannot do it (the
 * caller copies the rest itself). */
static int copy_in_kernel(rs_output *out, const rs_input *in, uint64_t *off, uint64_t *len, rs_error *err)
{
    while (*len && *off <= INT64_MAX) {
        loff_t from = (loff_t)*off;
        ssize_t n = copy_file_range(in->fd, &from, out->fd, NULL, *len > RS_COPY_CHUNK ? RS_COPY_CHUNK : *len, 0);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP ||
                      errno == EBADF || errno == ETXTBSY))
            return 0;
        if (n < 0)
            return rs_fail_sys(err, errno, "write failed: %s", strerror(errno));
        if (n == 0)
            return rs_fail(err, "file shrank while being read");
        *off += (uint64_t)n;
        *len -= (uint64_t)n;
        out->written += (uint64_t)n;
    }
    return 0;
}

int rs_output_copy(rs_output *out, const rs_input *in, uint64_t off, uint64_t len, rs_error *err)
{
    _cleanup_free_ uint8_t *buf = NULL;

    /* An observer must see the bytes, so it gets them through a buffer. */
    if (!out->observe && copy_in_kernel(out, in, &off, &len, err) < 0)
        return -1;
    if (!len)
        return 0;
    if (!(buf = malloc(len < RS_FILE_CHUNK ? len : RS_FILE_CHUNK)))
        return rs_fail(err, "out of memory");
    while (len) {
        size_t n = len > RS_FILE_CHUNK ? RS_FILE_CHUNK : (size_t)len;

        if (rs_input_read(in, off, buf, n, err) < 0 || rs_output_write(out, buf, n, err) < 0)
            return -1;
        off += n;
        len -= n;
    }
    return 0;
}

int rs_output_patch(rs_output *out, uint64_t off, const void *data, size_t len, rs_error *err)
{
    if (off > out->written || len > out->written - off)
        return rs_fail(err, "internal error: patch outside written output");
    if (rs_pwrite_all(out->fd, data, len, (off_t)off) < 0)
        return rs_fail_sys(err, errno, "write failed: %s", strerror(errno));
    return 0;
}

static int write_whole(const char *path, const void *data, size_t len, mode_t mode, bool exact, rs_error *err)
{
    _cleanup_output_ rs_output out = { .fd = -1 };

    if (rs_output_open(&out, path, mode, err) < 0)
        return -1;
    if (exact)
        out.mode = mode & 07777;
    if (rs_output_write(&out, data, len, err) < 0)
        return -1;
    return rs_output_commit(&out, err);
}

int rs_write_file(const char *path, const void *data, size_t len, mode_t mode, rs_error *err)
{
    return write_whole(path, data, len, mode, false, err);
}

int rs_write_public_file(const char *path, const void *data, size_t len, mode_t mode, rs_error *err)
{
    return write_whole(path, data, len, mode, true, err);
}

static int copy_into(const char *src, rs_output *out, mode_t mode, rs_error *err)
{
    _cleanup_input_ rs_input in = { .fd = -1 };

    if (rs_input_open(&in, src, err) < 0)
        return rs_error_prefix(err, "%s", src);
    out->durable = true;
    out->mode = mode & 07777;
    if (rs_output_copy(out, &in, 0, in.size, err) < 0 || rs_output_commit(out, err) < 0)
        return rs_error_prefix(err, "%s", out->path);
    return 0;
}

int rs_copy_file(const char *src, const char *dst, mode_t mode, rs_error *err)
{
    _cleanup_output_ rs_output out = { .fd = -1 };

    if (rs_output_open(&out, dst, mode, err) < 0)
        return rs_error_prefix(err, "%s", dst);
    return copy_into(src, &out, mode, err);
}

int rs_copy_file_at(const char *src, int dir, const char *dir_name, const char *name, mode_t mode, rs_error *err)
{
    _cleanup_output_ rs_output out = { .fd = -1 };

    if (rs_output_open_at(&out, dir, dir_name, name, mode, err) < 0)
        return rs_error_prefix(err, "%s/%s", dir_name, name);
    return copy_into(src, &out, mode, err);
}

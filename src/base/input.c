/* Inputs (file.h): read by position, never loaded whole, never modified;
 * a few bytes near either end come from a window of each end, read once. */
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"

/* Probing a format, its headers, section table and trailer take a handful
 * of reads of a few bytes each, all near the start or the end of the file:
 * those come from a window of each end, read once, not from a syscall
 * apiece. A module is usually smaller than one window. */
#define WINDOW (64 * 1024)
#define SMALL_READ 4096

typedef struct window {
    uint64_t off;
    size_t len;
    uint8_t *data;    /* NULL until first used */
} window;

struct rs_input_ends {
    window w[2];      /* the start of the file, its end */
};

int rs_input_open(rs_input *in, const char *path, rs_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    memset(in, 0, sizeof(*in));
    in->fd = -1;
    if (fd < 0)
        return rs_fail(err, "cannot open: %s", strerror(errno));
    return rs_input_from_fd(in, fd, path, err);
}

int rs_input_from_fd(rs_input *in, int fd, const char *path, rs_error *err)
{
    struct stat st;

    memset(in, 0, sizeof(*in));
    in->fd = fd;
    if (fstat(in->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(in->fd);
        in->fd = -1;
        return rs_fail(err, "not a regular file");
    }
    in->path = strdup(path);
    if (!in->path) {
        close(in->fd);
        in->fd = -1;
        return rs_fail(err, "out of memory");
    }
    in->size = (uint64_t)st.st_size;
    in->mode = st.st_mode & 07777;
    in->ends = calloc(1, sizeof(*in->ends));
    if (!in->ends) {
        rs_input_close(in);
        return rs_fail(err, "out of memory");
    }
    in->ends->w[0].len = in->ends->w[1].len = in->size < WINDOW ? (size_t)in->size : WINDOW;
    in->ends->w[1].off = in->size - in->ends->w[1].len;
    return 0;
}

void rs_input_close(rs_input *in)
{
    if (in->fd >= 0)
        close(in->fd);
    in->fd = -1;
    free(in->path);
    in->path = NULL;
    if (in->ends) {
        free(in->ends->w[0].data);
        free(in->ends->w[1].data);
        free(in->ends);
        in->ends = NULL;
    }
}

/* Reads len bytes, at off, or from the fd's position when off < 0. */
static ssize_t read_loop(int fd, void *buf, size_t len, off_t off)
{
    size_t done = 0;

    while (done < len) {
        uint8_t *to = (uint8_t *)buf + done;
        ssize_t n = off < 0 ? read(fd, to, len - done) : pread(fd, to, len - done, off + (off_t)done);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        done += (size_t)n;
    }
    return (ssize_t)done;
}

ssize_t rs_pread_all(int fd, void *buf, size_t len, off_t off)
{
    return off < 0 ? (errno = EINVAL, -1) : read_loop(fd, buf, len, off);
}

ssize_t rs_read_all(int fd, void *buf, size_t len)
{
    return read_loop(fd, buf, len, -1);
}

static int read_at(const rs_input *in, uint64_t off, void *buf, size_t len, rs_error *err)
{
    ssize_t n = rs_pread_all(in->fd, buf, len, (off_t)off);

    if (n < 0)
        return rs_fail(err, "read failed: %s", strerror(errno));
    if ((size_t)n < len)
        return rs_fail(err, "file shrank while being read");
    return 0;
}

/* The window holding [off, off+len), read now if this is a small read;
 * NULL (and no error) when the range is read directly. */
static const window *window_for(const rs_input *in, uint64_t off, size_t len, rs_error *err, int *rc)
{
    *rc = 0;
    for (int i = 0; in->ends && i < 2; i++) {
        window *w = &in->ends->w[i];

        if (off < w->off || len > w->len || off - w->off > w->len - len || (!w->data && len > SMALL_READ))
            continue;
        if (!w->data) {
            if (!(w->data = malloc(w->len ? w->len : 1))) {
                *rc = rs_fail(err, "out of memory");
                return NULL;
            }
            if ((*rc = read_at(in, w->off, w->data, w->len, err)) < 0) {
                free(w->data);
                w->data = NULL;
                return NULL;
            }
        }
        return w;
    }
    return NULL;
}

/* [off, off+len) lies inside the file, as its size was when opened. */
static int in_file(const rs_input *in, uint64_t off, uint64_t len, rs_error *err)
{
    if (off > in->size || len > in->size - off)
        return rs_fail(err, "truncated: needs %llu bytes at offset %llu, file has %llu", (unsigned long long)len,
                       (unsigned long long)off, (unsigned long long)in->size);
    return 0;
}

int rs_input_read(const rs_input *in, uint64_t off, void *buf, size_t len, rs_error *err)
{
    const window *w;
    int rc;

    if (in_file(in, off, len, err) < 0)
        return -1;
    if (!len) /* nothing to copy, and buf may be a buffer never allocated */
        return 0;
    w = window_for(in, off, len, err, &rc);
    if (rc < 0)
        return -1;
    if (!w)
        return read_at(in, off, buf, len, err);
    memcpy(buf, w->data + (off - w->off), len);
    return 0;
}

static _Thread_local uint64_t hashed_bytes;

int rs_hash_update(EVP_MD_CTX *md, const void *data, size_t len)
{
    if (!EVP_DigestUpdate(md, data, len))
        return 0;
    hashed_bytes += len;
    return 1;
}

uint64_t rs_hashed_bytes(void)
{
    return hashed_bytes;
}

int rs_input_hash(const rs_input *in, uint64_t off, uint64_t len, EVP_MD_CTX *md, rs_error *err)
{
    return rs_input_hash_observed(in, off, len, md, NULL, NULL, err);
}

/* The loaded window that holds the byte at off, if any. */
static const window *loaded_at(const rs_input *in, uint64_t off)
{
    for (int i = 0; in->ends && i < 2; i++) {
        const window *w = &in->ends->w[i];

        if (w->data && off >= w->off && off - w->off < w->len)
            return w;
    }
    return NULL;
}

/* How much of [off, off+len) to read before a loaded window starts. */
static size_t read_before_window(const rs_input *in, uint64_t off, uint64_t len)
{
    uint64_t n = len < RS_FILE_CHUNK ? len : RS_FILE_CHUNK;

    for (int i = 0; in->ends && i < 2; i++) {
        const window *w = &in->ends->w[i];

        if (w->data && w->off > off && w->off - off < n)
            n = w->off - off;
    }
    return (size_t)n;
}

/* Bytes a window already holds (the checks read a file's two ends) are
 * hashed from it, not read again: each byte is read from the file once. */
int rs_input_hash_observed(const rs_input *in, uint64_t off, uint64_t len, EVP_MD_CTX *md,
                           rs_output_observer observe, void *ctx, rs_error *err)
{
    _cleanup_free_ uint8_t *buf = NULL;
    int rc;

    if (in_file(in, off, len, err) < 0)
        return -1;
    /* A small range near an end loads that end's window, as a read would. */
    window_for(in, off, (size_t)len, err, &rc);
    if (rc < 0)
        return -1;
    while (len) {
        const window *w = loaded_at(in, off);
        const uint8_t *bytes;
        size_t n;

        if (w) {
            n = w->off + w->len - off < len ? (size_t)(w->off + w->len - off) : (size_t)len;
            bytes = w->data + (off - w->off);
        } else {
            n = read_before_window(in, off, len);
            if (!buf && !(buf = malloc(len < RS_FILE_CHUNK ? (size_t)len : RS_FILE_CHUNK)))
                return rs_fail(err, "out of memory");
            if (read_at(in, off, buf, n, err) < 0)
                return -1;
            bytes = buf;
        }
        if (!rs_hash_update(md, bytes, n))
            return rs_fail_ssl(err, "digest failed");
        if (observe)
            observe(ctx, bytes, n);
        off += n;
        len -= n;
    }
    return 0;
}

static int read_whole(rs_input *in, size_t max, rs_bytes *out, rs_error *err)
{
    uint8_t *data;

    if (in->size > max)
        return rs_fail(err, "file too large (%llu bytes, limit %zu)", (unsigned long long)in->size, max);
    data = malloc(in->size ? in->size : 1);
    if (!data)
        return rs_fail(err, "out of memory");
    if (rs_input_read(in, 0, data, in->size, err) < 0) {
        free(data);
        return -1;
    }
    rs_bytes_adopt(out, data, in->size);
    return 0;
}


int rs_read_file(const char *path, size_t max, rs_bytes *out, rs_error *err)
{
    _cleanup_(rs_input_close) rs_input in = { .fd = -1 };

    if (rs_input_open(&in, path, err) < 0)
        return -1;
    return read_whole(&in, max, out, err);
}

int rs_read_fd(int fd, const char *name, size_t max, rs_bytes *out, rs_error *err)
{
    _cleanup_(rs_input_close) rs_input in = { .fd = -1 };

    if (rs_input_from_fd(&in, fd, name, err) < 0)
        return -1;
    return read_whole(&in, max, out, err);
}

int rs_file_sha256(const char *path, uint8_t out[32], uint64_t *size, rs_error *err)
{
    _cleanup_(rs_input_close) rs_input in = { .fd = -1 };

    if (rs_input_open(&in, path, err) < 0 || rs_input_sha256(&in, out, err) < 0)
        return -1;
    if (size)
        *size = in.size;
    return 0;
}

int rs_input_sha256(const rs_input *in, uint8_t out[32], rs_error *err)
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    int rc = -1;

    if (!md || !EVP_DigestInit_ex(md, EVP_sha256(), NULL))
        rs_fail_ssl(err, "digest failed");
    else if (rs_input_hash(in, 0, in->size, md, err) == 0)
        rc = EVP_DigestFinal_ex(md, out, NULL) ? 0 : rs_fail_ssl(err, "digest failed");
    EVP_MD_CTX_free(md);
    return rc;
}

/* Outputs (file.h): a temporary file beside the target, renamed into place
 * only on commit, so a failed command leaves nothing behind. */
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"

/* Read once at start-up: umask() can only be read by setting it, which is
 * not safe once worker threads exist. mkstemp() ignores it, so we apply it. */
static mode_t process_umask = 022;

__attribute__((constructor)) static void read_umask(void)
{
    process_umask = umask(022);
    umask(process_umask);
}

void rs_umask_set(mode_t mask)
{
    process_umask = mask;
    umask(mask);
}

/* Temporary files that a fatal signal must remove. Fixed size: a command
 * has at most a handful of outputs open at once. Worker threads open
 * outputs side by side, and a signal handler reads the table, so slots
 * are claimed and read atomically: no lock a handler could wait on. */
#define MAX_TRACKED 64
static char *tracked[MAX_TRACKED];

static void track(char *tmp)
{
    for (int i = 0; i < MAX_TRACKED; i++) {
        char *expected = NULL;

        if (__atomic_compare_exchange_n(&tracked[i], &expected, tmp, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
            return;
    }
}

static void untrack(const char *tmp)
{
    for (int i = 0; i < MAX_TRACKED; i++) {
        char *expected = (char *)tmp;

        __atomic_compare_exchange_n(&tracked[i], &expected, NULL, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    }
}

static void remove_tracked_and_die(int sig)
{
    for (int i = 0; i < MAX_TRACKED; i++) {
        char *path = __atomic_load_n(&tracked[i], __ATOMIC_SEQ_CST);

        if (path)
            unlink(path);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

void rs_output_track_signals(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };

    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        signal(sigs[i], remove_tracked_and_die);
}

/* DIR/.BASE.SUFFIX beside DIR/BASE: the one place temporaries are named,
 * so a kept one is found again from its target's path. */
static char *temporary_path(const char *path, const char *suffix)
{
    _cleanup_free_ char *copy = strdup(path);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char *tmp;

    if (!copy || asprintf(&tmp, "%s/.%s.%s", dirname(copy), base, suffix) < 0)
        return NULL;
    return tmp;
}

int rs_output_open(rs_output *out, const char *path, mode_t mode, rs_error *err)
{
    memset(out, 0, sizeof(*out));
    out->fd = -1;
    if (!(out->tmp_path = temporary_path(path, "XXXXXX")))
        return rs_fail(err, "out of memory");
    out->path = strdup(path);
    if (!out->path)
        return rs_fail(err, "out of memory");
    out->fd = mkostemp(out->tmp_path, O_CLOEXEC);
    if (out->fd < 0) {
        int e = errno;

        *strrchr(out->tmp_path, '/') = '\0';   /* the directory it was to be in */
        rs_fail_sys(err, e, "cannot create output in %s: %s", out->tmp_path, strerror(e));
        free(out->tmp_path);
        out->tmp_path = NULL;
        return -1;
    }
    track(out->tmp_path);
    out->mode = mode & 0777 & ~process_umask;
    return 0;
}

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

int rs_output_seal(rs_output *out, rs_error *err)
{
    if (out->fd < 0)
        return 0;
    if (out->durable && fsync(out->fd) < 0)
        return rs_fail_sys(err, errno, "fsync failed: %s", strerror(errno));
    if (close(out->fd) < 0) {
        out->fd = -1;
        return rs_fail_sys(err, errno, "close failed: %s", strerror(errno));
    }
    out->fd = -1;
    return 0;
}

/* A sealed temporary given its mode, then renamed onto its target. */
static int move_into_place(const char *tmp, const char *path, mode_t mode, rs_error *err)
{
    if (chmod(tmp, mode) < 0)
        return rs_fail(err, "cannot set mode: %s", strerror(errno));
    if (rename(tmp, path) < 0)
        return rs_fail(err, "cannot rename into place: %s", strerror(errno));
    return 0;
}

int rs_output_commit(rs_output *out, rs_error *err)
{
    if (rs_output_seal(out, err) < 0 || move_into_place(out->tmp_path, out->path, out->mode, err) < 0)
        return -1;
    untrack(out->tmp_path);
    free(out->tmp_path);
    out->tmp_path = NULL;
    return 0;
}

int rs_output_keep(rs_output *out, rs_output_kept *kept, rs_error *err)
{
    const char *suffix = out->tmp_path ? strrchr(out->tmp_path, '.') : NULL;

    memset(kept, 0, sizeof(*kept));
    if (rs_output_seal(out, err) < 0)
        return -1;
    if (!suffix || strlen(suffix + 1) != sizeof(kept->suffix) - 1)
        return rs_fail(err, "%s: no temporary to keep", out->path);
    memcpy(kept->suffix, suffix + 1, sizeof(kept->suffix));
    kept->mode = out->mode;
    untrack(out->tmp_path);
    free(out->tmp_path);
    out->tmp_path = NULL;
    free(out->path);
    out->path = NULL;
    return 0;
}

int rs_output_commit_kept(const char *path, rs_output_kept *kept, rs_error *err)
{
    _cleanup_free_ char *tmp = NULL;

    if (!kept->suffix[0])
        return rs_fail(err, "%s: no temporary is kept for it", path);
    if (!(tmp = temporary_path(path, kept->suffix)))
        return rs_fail(err, "out of memory");
    if (move_into_place(tmp, path, kept->mode, err) < 0)
        return rs_error_prefix(err, "%s", path);
    kept->suffix[0] = '\0';
    return 0;
}

void rs_output_abort_kept(const char *path, rs_output_kept *kept)
{
    _cleanup_free_ char *tmp = kept->suffix[0] ? temporary_path(path, kept->suffix) : NULL;

    if (tmp)
        unlink(tmp);
    kept->suffix[0] = '\0';
}

void rs_output_abort(rs_output *out)
{
    if (out->fd >= 0)
        close(out->fd);
    out->fd = -1;
    if (out->tmp_path) {
        unlink(out->tmp_path);
        untrack(out->tmp_path);
        free(out->tmp_path);
        out->tmp_path = NULL;
    }
    free(out->path);
    out->path = NULL;
}


int rs_write_file(const char *path, const void *data, size_t len, mode_t mode, rs_error *err)
{
    _cleanup_output_ rs_output out = { .fd = -1 };

    if (rs_output_open(&out, path, mode, err) < 0 || rs_output_write(&out, data, len, err) < 0)
        return -1;
    return rs_output_commit(&out, err);
}

int rs_copy_file(const char *src, const char *dst, mode_t mode, rs_error *err)
{
    _cleanup_input_ rs_input in = { .fd = -1 };
    _cleanup_output_ rs_output out = { .fd = -1 };

    if (rs_input_open(&in, src, err) < 0)
        return rs_error_prefix(err, "%s", src);
    if (rs_output_open(&out, dst, mode, err) < 0)
        return rs_error_prefix(err, "%s", dst);
    out.durable = true;
    out.mode = mode & 07777;
    if (rs_output_copy(&out, &in, 0, in.size, err) < 0 || rs_output_commit(&out, err) < 0)
        return rs_error_prefix(err, "%s", dst);
    return 0;
}

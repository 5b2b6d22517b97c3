#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <linux/openat2.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/cleanup.h"

#define CHUNK (256 * 1024)

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

static int read_at(const rs_input *in, uint64_t off, void *buf, size_t len, rs_error *err)
{
    uint8_t *p = buf;

    while (len) {
        ssize_t n = pread(in->fd, p, len, (off_t)off);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return rs_fail(err, "read failed: %s", strerror(errno));
        if (n == 0)
            return rs_fail(err, "file shrank while being read");
        p += n;
        off += (uint64_t)n;
        len -= (size_t)n;
    }
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

int rs_input_read(const rs_input *in, uint64_t off, void *buf, size_t len, rs_error *err)
{
    const window *w;
    int rc;

    if (off > in->size || len > in->size - off)
        return rs_fail(err, "truncated: needs %zu bytes at offset %llu, file has %llu", len,
                       (unsigned long long)off, (unsigned long long)in->size);
    w = window_for(in, off, len, err, &rc);
    if (rc < 0)
        return -1;
    if (!w)
        return read_at(in, off, buf, len, err);
    memcpy(buf, w->data + (off - w->off), len);
    return 0;
}

/* A range a window already holds is hashed where it is. */
static int hash_window(const rs_input *in, uint64_t off, uint64_t len, EVP_MD_CTX *md, rs_error *err)
{
    const window *w;
    int rc = 0;

    if (len > WINDOW || !(w = window_for(in, off, (size_t)len, err, &rc)))
        return rc;
    if (!EVP_DigestUpdate(md, w->data + (off - w->off), (size_t)len))
        return rs_fail_ssl(err, "digest failed");
    return 1;
}

int rs_input_hash(const rs_input *in, uint64_t off, uint64_t len, EVP_MD_CTX *md, rs_error *err)
{
    _cleanup_free_ uint8_t *buf = NULL;
    int rc = hash_window(in, off, len, md, err);

    if (rc != 0)
        return rc < 0 ? -1 : 0;
    if (!(buf = malloc(len < CHUNK ? (len ? len : 1) : CHUNK)))
        return rs_fail(err, "out of memory");
    while (len) {
        size_t n = len > CHUNK ? CHUNK : (size_t)len;

        if (rs_input_read(in, off, buf, n, err) < 0)
            return -1;
        if (!EVP_DigestUpdate(md, buf, n))
            return rs_fail_ssl(err, "digest failed");
        off += n;
        len -= n;
    }
    return 0;
}

static int refuse_open(int e, const char *dir_name, rs_error *err)
{
    if (e == EXDEV)
        return rs_fail(err, "leads outside %s (through \"..\" or a symbolic link)", dir_name);
    if (e == ELOOP)
        return rs_fail(err, "goes through a symbolic link");
    return rs_fail(err, "cannot open: %s", strerror(e));
}

#define WALK_MAX_DEPTH 256
#define WALK_MAX_HOPS 40

/* The directories a walk has entered below its root, innermost last. */
typedef struct walk_dirs {
    int fd[WALK_MAX_DEPTH];
    size_t depth;
} walk_dirs;

static void walk_dirs_close(walk_dirs *w)
{
    while (w->depth)
        close(w->fd[--w->depth]);
}

/* One component of *rest, taken off its front into comp (NULL when none is
 * left; *last when it is the final one). */
static char *take_component(char *rest, char **comp, bool *last)
{
    char *slash;

    while (*rest == '/')
        rest++;
    if (!*rest)
        return *comp = NULL, rest;
    *comp = rest;
    if ((slash = strchr(rest, '/')))
        *slash++ = '\0';
    else
        slash = rest + strlen(rest);
    while (*slash == '/')
        slash++;
    *last = !*slash;
    return slash;
}

/* A symlink at comp (which points into *rest): its target is walked in
 * its place, before what came after it. */
static int follow(int cur, const char *comp, char **rest, const char *after, int *hops, int *e, rs_error *err)
{
    char target[PATH_MAX], *joined;
    ssize_t n;

    if (++*hops > WALK_MAX_HOPS) {
        *e = ELOOP;
        return 0;
    }
    if ((n = readlinkat(cur, comp, target, sizeof(target) - 1)) < 0) {
        *e = errno;
        return 0;
    }
    target[n] = '\0';
    if (target[0] == '/') {
        *e = EXDEV;
        return 0;
    }
    if (asprintf(&joined, "%s/%s", target, after) < 0)
        return rs_fail(err, "out of memory");
    free(*rest);
    *rest = joined;
    return 0;
}

int rs_open_beneath_walk(int dir, const char *dir_name, const char *rel, bool no_symlinks, int *fd, rs_error *err)
{
    _cleanup_free_ char *rest = strdup(rel);
    walk_dirs w = { .depth = 0 };
    char *pos, *comp;
    int hops = 0, e = 0, f = -1;
    bool last = false;

    if (!rest)
        return rs_fail(err, "out of memory");
    if (rel[0] == '/')
        return refuse_open(EXDEV, dir_name, err);
    for (pos = take_component(rest, &comp, &last); comp && !e && f < 0; pos = take_component(pos, &comp, &last)) {
        int cur = w.depth ? w.fd[w.depth - 1] : dir;
        struct stat st;

        if (!strcmp(comp, ".") && !last)
            continue;
        if (!strcmp(comp, "..")) {
            if (!w.depth)
                e = EXDEV;
            else
                close(w.fd[--w.depth]);
            if (!e && last)
                e = EISDIR;
            continue;
        }
        if (fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            e = errno;
        } else if (S_ISLNK(st.st_mode)) {
            if (no_symlinks)
                e = ELOOP;
            else if (follow(cur, comp, &rest, pos, &hops, &e, err) < 0) {
                walk_dirs_close(&w);
                return -1;
            } else
                pos = rest;
        } else if (!last) {
            /* O_NOFOLLOW: a symlink put there since the fstatat is refused. */
            int d = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

            if (d < 0)
                e = errno == ENOTDIR && S_ISDIR(st.st_mode) ? ELOOP : errno;
            else if (w.depth == WALK_MAX_DEPTH) {
                close(d);
                e = ENAMETOOLONG;
            } else
                w.fd[w.depth++] = d;
        } else if ((f = openat(cur, comp, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)) < 0) {
            e = errno;
        }
    }
    walk_dirs_close(&w);
    if (!e && f < 0)
        e = EISDIR;
    if (e)
        return refuse_open(e, dir_name, err);
    *fd = f;
    return 0;
}

int rs_open_beneath(int dir, const char *dir_name, const char *rel, bool no_symlinks, int *fd, rs_error *err)
{
    struct open_how how = {
        .flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,   /* a FIFO put in place cannot hang it */
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | (no_symlinks ? RESOLVE_NO_SYMLINKS : 0),
    };
    long f = syscall(SYS_openat2, dir, rel, &how, sizeof(how));

    if (f >= 0) {
        *fd = (int)f;
        return 0;
    }
    if (errno == ENOSYS || errno == EPERM)
        return rs_open_beneath_walk(dir, dir_name, rel, no_symlinks, fd, err);
    return refuse_open(errno, dir_name, err);
}

static int read_whole(rs_input *in, size_t max, rs_bytes *out, rs_error *err);

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

/* Read once at start-up: umask() can only be read by setting it, which is
 * not safe once worker threads exist. mkstemp() ignores it, so we apply it. */
static mode_t process_umask = 022;

__attribute__((constructor)) static void read_umask(void)
{
    process_umask = umask(022);
    umask(process_umask);
}

/* Temporary files that a fatal signal must remove. Fixed size: a command
 * has at most a handful of outputs open at once. */
#define MAX_TRACKED 64
static char *volatile tracked[MAX_TRACKED];

static void track(char *tmp)
{
    for (int i = 0; i < MAX_TRACKED; i++)
        if (!tracked[i]) {
            tracked[i] = tmp;
            return;
        }
}

static void untrack(const char *tmp)
{
    for (int i = 0; i < MAX_TRACKED; i++)
        if (tracked[i] == tmp)
            tracked[i] = NULL;
}

static void remove_tracked_and_die(int sig)
{
    for (int i = 0; i < MAX_TRACKED; i++)
        if (tracked[i])
            unlink(tracked[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

void rs_output_track_signals(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };

    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        signal(sigs[i], remove_tracked_and_die);
}

int rs_output_open(rs_output *out, const char *path, mode_t mode, rs_error *err)
{
    _cleanup_free_ char *copy = strdup(path);
    const char *dir, *base;
    int n;

    memset(out, 0, sizeof(*out));
    out->fd = -1;
    if (!copy)
        return rs_fail(err, "out of memory");
    base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    dir = dirname(copy);
    n = asprintf(&out->tmp_path, "%s/.%s.XXXXXX", dir, base);
    if (n < 0) {
        out->tmp_path = NULL;
        return rs_fail(err, "out of memory");
    }
    out->path = strdup(path);
    if (!out->path)
        return rs_fail(err, "out of memory");
    out->fd = mkostemp(out->tmp_path, O_CLOEXEC);
    if (out->fd < 0) {
        int e = errno;

        free(out->tmp_path);
        out->tmp_path = NULL;
        return rs_fail(err, "cannot create output in %s: %s", dir, strerror(e));
    }
    track(out->tmp_path);
    out->mode = mode & 0777 & ~process_umask;
    return 0;
}

int rs_output_write(rs_output *out, const void *data, size_t len, rs_error *err)
{
    const uint8_t *p = data;

    if (out->observe && len)
        out->observe(out->observe_ctx, p, len);
    while (len) {
        ssize_t n = write(out->fd, p, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return rs_fail(err, "write failed: %s", strerror(errno));
        p += n;
        len -= (size_t)n;
        out->written += (uint64_t)n;
    }
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

int rs_output_copy(rs_output *out, const rs_input *in, uint64_t off, uint64_t len, rs_error *err)
{
    _cleanup_free_ uint8_t *buf = malloc(len < CHUNK ? (len ? len : 1) : CHUNK);

    if (!buf)
        return rs_fail(err, "out of memory");
    while (len) {
        size_t n = len > CHUNK ? CHUNK : (size_t)len;

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
    if (pwrite(out->fd, data, len, (off_t)off) != (ssize_t)len)
        return rs_fail(err, "write failed: %s", strerror(errno));
    return 0;
}

int rs_output_seal(rs_output *out, rs_error *err)
{
    if (out->fd < 0)
        return 0;
    if (out->durable && fsync(out->fd) < 0)
        return rs_fail(err, "fsync failed: %s", strerror(errno));
    if (close(out->fd) < 0) {
        out->fd = -1;
        return rs_fail(err, "close failed: %s", strerror(errno));
    }
    out->fd = -1;
    return 0;
}

int rs_output_commit(rs_output *out, rs_error *err)
{
    if (rs_output_seal(out, err) < 0)
        return -1;
    if (chmod(out->tmp_path, out->mode) < 0)
        return rs_fail(err, "cannot set mode: %s", strerror(errno));
    if (rename(out->tmp_path, out->path) < 0)
        return rs_fail(err, "cannot rename into place: %s", strerror(errno));
    untrack(out->tmp_path);
    free(out->tmp_path);
    out->tmp_path = NULL;
    return 0;
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

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

void rs_remove_tree(const char *dir)
{
    if (dir && access(dir, F_OK) == 0)
        nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Deepest first: in a tree being filled, a new directory's parent usually
 * exists already, so this costs one mkdir, not one per level. */
static int mkdir_missing(char *dir, rs_error *err)
{
    char *slash;
    int rc;

    if (mkdir(dir, 0755) == 0 || errno == EEXIST)
        return 0;
    if (errno != ENOENT || !(slash = strrchr(dir, '/')) || slash == dir)
        return rs_fail(err, "%s: %s", dir, strerror(errno));
    *slash = '\0';
    rc = mkdir_missing(dir, err);
    *slash = '/';
    if (rc < 0)
        return -1;
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return rs_fail(err, "%s: %s", dir, strerror(errno));
    return 0;
}

int rs_replace_path(const char *path, int fd, char **out, rs_error *err)
{
    _cleanup_free_ char *real = realpath(path, NULL);
    struct stat opened, now;

    if (!real)
        return rs_fail(err, "%s", strerror(errno));
    if (fstat(fd, &opened) < 0 || stat(real, &now) < 0 || opened.st_dev != now.st_dev || opened.st_ino != now.st_ino)
        return rs_fail(err, "changed while it was read");
    *out = TAKE_PTR(real);
    return 0;
}

int rs_mkdir_parents(const char *path, rs_error *err)
{
    _cleanup_free_ char *copy = strdup(path);
    char *slash;

    if (!copy)
        return rs_fail(err, "out of memory");
    slash = strrchr(copy, '/');
    if (!slash || slash == copy)
        return 0;
    *slash = '\0';
    return mkdir_missing(copy, err);
}

int rs_write_all(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;

    while (len) {
        ssize_t n = write(fd, p, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int rs_write_new_file(const char *path, const void *data, size_t len, mode_t mode, rs_error *err)
{
    int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    _cleanup_close_ int fd = open(path, flags, mode);

    /* Parents are made only when missing: most files share theirs. */
    if (fd < 0 && errno == ENOENT) {
        if (rs_mkdir_parents(path, err) < 0)
            return -1;
        fd = open(path, flags, mode);
    }
    if (fd < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    if (rs_write_all(fd, data, len) < 0) {
        int e = errno;

        unlink(path);
        return rs_fail(err, "%s: write failed: %s", path, strerror(e));
    }
    return 0;
}

int rs_sync_filesystem(const char *path, rs_error *err)
{
    _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0 || syncfs(fd) < 0)
        return rs_fail(err, "%s: cannot sync: %s", path, strerror(errno));
    return 0;
}

/* A POSIX record lock, not flock(): a child that posix_spawn() starts has a
 * copy of every descriptor until it execs, and a flock() would stay held
 * through that copy if this process were killed meanwhile. A record lock
 * belongs to the process and is gone the moment it dies. */
int rs_lock_file(const char *path, int *fd, bool *busy, rs_error *err)
{
    struct flock whole = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
    int e;

    *busy = false;
    *fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (*fd < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    if (fcntl(*fd, F_SETLK, &whole) == 0)
        return 0;
    e = errno;
    close(*fd);
    *fd = -1;
    *busy = e == EACCES || e == EAGAIN;
    return rs_fail(err, "%s: %s", path, *busy ? "locked by another process" : strerror(e));
}

int rs_write_file(const char *path, const void *data, size_t len, mode_t mode, rs_error *err)
{
    _cleanup_output_ rs_output out = { .fd = -1 };

    if (rs_output_open(&out, path, mode, err) < 0 || rs_output_write(&out, data, len, err) < 0)
        return -1;
    return rs_output_commit(&out, err);
}

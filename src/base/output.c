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
#include <sys/random.h>
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

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');

    return slash ? slash + 1 : path;
}

void (*rs_output_test_before_commit)(const char *tmp_path);

/* Six random characters in place of the temporary's XXXXXX, as mkostemp
 * would, but created with openat in the directory held open: O_EXCL and
 * O_NOFOLLOW, so nothing planted under that name is opened. */
static int create_temporary(rs_output *out)
{
    static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    char *x = out->tmp_path + strlen(out->tmp_path) - 6;
    uint8_t r[6];

    for (int tries = 0; tries < 100; tries++) {
        if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
            return -1;
        for (int i = 0; i < 6; i++)
            x[i] = chars[r[i] % (sizeof(chars) - 1)];
        out->fd = openat(out->dir, base_name(out->tmp_path), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (out->fd >= 0 || errno != EEXIST)
            return out->fd;
    }
    return -1;
}

/* out->dir is open and out->path set: the temporary beside it. */
static int open_temporary(rs_output *out, mode_t mode, rs_error *err)
{
    struct stat st;

    if (!(out->tmp_path = temporary_path(out->path, "XXXXXX")))
        return rs_fail(err, "out of memory");
    if (create_temporary(out) < 0 || fstat(out->fd, &st) < 0) {
        int e = errno;

        *strrchr(out->tmp_path, '/') = '\0';   /* the directory it was to be in */
        rs_fail_sys(err, e, "cannot create output in %s: %s", out->tmp_path, strerror(e));
        free(out->tmp_path);
        out->tmp_path = NULL;
        return -1;
    }
    out->dev = st.st_dev;
    out->ino = st.st_ino;
    track(out->tmp_path);
    out->mode = mode & 0777 & ~process_umask;
    return 0;
}

static void output_init(rs_output *out)
{
    memset(out, 0, sizeof(*out));
    out->fd = -1;
    out->dir = -1;
}

/* The directory is followed if a link (as a command's --output always
 * was); it is held from here on, so the rename lands where the temporary
 * was made. */
int rs_output_open(rs_output *out, const char *path, mode_t mode, rs_error *err)
{
    _cleanup_free_ char *copy = strdup(path);

    output_init(out);
    if (!copy || !(out->path = strdup(path)))
        return rs_fail(err, "out of memory");
    if ((out->dir = open(dirname(copy), O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        return rs_fail_sys(err, errno, "cannot create output in %s: %s", copy, strerror(errno));
    out->dir_open = true;
    return open_temporary(out, mode, err);
}

int rs_output_open_at(rs_output *out, int dir, const char *dir_name, const char *name, mode_t mode, rs_error *err)
{
    output_init(out);
    if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
        return rs_fail(err, "%s: \"%s\" is not a file name", dir_name, name);
    if (!(out->path = rs_path_join(dir_name, name)))
        return rs_fail(err, "out of memory");
    if ((out->dir = fcntl(dir, F_DUPFD_CLOEXEC, 0)) < 0)
        return rs_fail_sys(err, errno, "%s: %s", dir_name, strerror(errno));
    out->dir_open = true;
    return open_temporary(out, mode, err);
}

static void close_dir(rs_output *out)
{
    if (out->dir_open)
        close(out->dir);
    out->dir = -1;
    out->dir_open = false;
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

/* Renamed within the directory it was made in; then what the target's name
 * holds must be the file written: a user who can write the directory may
 * have swapped the temporary for a link or a file of theirs meanwhile, and
 * that is reported, not delivered as ours. */
static int move_into_place(rs_output *out, rs_error *err)
{
    const char *name = base_name(out->path);
    struct stat st;

    if (renameat(out->dir, base_name(out->tmp_path), out->dir, name) < 0)
        return rs_fail(err, "cannot rename into place: %s", strerror(errno));
    if (fstatat(out->dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return rs_fail(err, "gone once renamed into place: %s", strerror(errno));
    if (!S_ISREG(st.st_mode) || st.st_dev != out->dev || st.st_ino != out->ino)
        return rs_fail(err, "not the file written once renamed into place: another user replaced it "
                            "(they can write the directory)");
    return 0;
}

int rs_output_commit(rs_output *out, rs_error *err)
{
    if (rs_output_test_before_commit)
        rs_output_test_before_commit(out->tmp_path);
    /* The mode on the descriptor, as the last step before the rename (the
     * temporary stays private until then): a chmod by name would follow a
     * symlink put in the temporary's place to whatever file it names. */
    if (out->fd >= 0 && fchmod(out->fd, out->mode) < 0)
        return rs_fail_sys(err, errno, "cannot set mode: %s", strerror(errno));
    if (rs_output_seal(out, err) < 0 || move_into_place(out, err) < 0)
        return -1;
    untrack(out->tmp_path);
    free(out->tmp_path);
    out->tmp_path = NULL;
    close_dir(out);
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
    close_dir(out);
    untrack(out->tmp_path);
    free(out->tmp_path);
    out->tmp_path = NULL;
    free(out->path);
    out->path = NULL;
    return 0;
}

/* A kept temporary's mode, on a descriptor opened refusing a link. */
static int set_mode_nofollow(const char *tmp, mode_t mode, rs_error *err)
{
    _cleanup_close_ int fd = open(tmp, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

    if (fd < 0 || fchmod(fd, mode) < 0)
        return rs_fail(err, "cannot set mode: %s", strerror(errno));
    return 0;
}

int rs_output_commit_kept(const char *path, rs_output_kept *kept, rs_error *err)
{
    _cleanup_free_ char *tmp = NULL;

    if (!kept->suffix[0])
        return rs_fail(err, "%s: no temporary is kept for it", path);
    if (!(tmp = temporary_path(path, kept->suffix)))
        return rs_fail(err, "out of memory");
    if (set_mode_nofollow(tmp, kept->mode, err) < 0)
        return rs_error_prefix(err, "%s", path);
    if (rename(tmp, path) < 0)
        return rs_fail(err, "%s: cannot rename into place: %s", path, strerror(errno));
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
        if (out->dir_open)
            unlinkat(out->dir, base_name(out->tmp_path), 0);
        else
            unlink(out->tmp_path);
        untrack(out->tmp_path);
        free(out->tmp_path);
        out->tmp_path = NULL;
    }
    close_dir(out);
    free(out->path);
    out->path = NULL;
}

/* Directories and paths (file.h): making, removing, syncing, naming. */
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"

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

static int remove_dir_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)ftw;
    if (flag == FTW_DP)
        rmdir(path);   /* one that is not empty stays, as its files do */
    return 0;
}

void rs_remove_empty_dirs(const char *dir)
{
    if (dir && access(dir, F_OK) == 0)
        nftw(dir, remove_dir_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A directory just made gets exactly mode, whatever the umask, through a
 * descriptor: a chmod by name would follow a link put in its place. */
static int set_made_mode(const char *dir, mode_t mode, rs_error *err)
{
    _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0 || fchmod(fd, mode) < 0)
        return rs_fail_sys(err, errno, "%s: cannot set mode: %s", dir, strerror(errno));
    return 0;
}

int rs_mkdir_exact(const char *path, mode_t mode, rs_error *err)
{
    if (mkdir(path, mode) < 0)
        return rs_fail_sys(err, errno, "%s: %s", path, strerror(errno));
    return set_made_mode(path, mode, err);
}

/* How the directories are made: 0755 less the umask, or exactly mode. */
typedef struct made_dirs {
    mode_t mode;
    bool exact;
    size_t made;
} made_dirs;

static int make_one(const char *dir, made_dirs *m, rs_error *err)
{
    if (mkdir(dir, m->mode) < 0)
        return -1;
    if (!m->made)
        m->made = strlen(dir);
    return m->exact ? (set_made_mode(dir, m->mode, err) < 0 ? -2 : 0) : 0;
}

/* Deepest first: in a tree being filled, a new directory's parent usually
 * exists already, so this costs one mkdir, not one per level. m->made is
 * the length of the shallowest directory made, kept even on failure. */
static int mkdir_missing(char *dir, made_dirs *m, rs_error *err)
{
    char *slash;
    int rc = make_one(dir, m, err);

    if (rc == 0 || rc == -2)
        return rc == 0 ? 0 : -1;
    if (errno == EEXIST)
        return 0;
    if (errno != ENOENT || !(slash = strrchr(dir, '/')) || slash == dir)
        return rs_fail_sys(err, errno, "%s: %s", dir, strerror(errno));
    *slash = '\0';
    rc = mkdir_missing(dir, m, err);
    *slash = '/';
    if (rc < 0)
        return -1;
    if ((rc = make_one(dir, m, err)) == 0 || rc == -2)
        return rc == 0 ? 0 : -1;
    if (errno != EEXIST)
        return rs_fail_sys(err, errno, "%s: %s", dir, strerror(errno));
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

static int mkdir_parents(const char *path, made_dirs *m, rs_error *err)
{
    _cleanup_free_ char *copy = strdup(path);
    char *slash;

    if (!copy)
        return rs_fail(err, "out of memory");
    slash = strrchr(copy, '/');
    if (!slash || slash == copy)
        return 0;
    *slash = '\0';
    return mkdir_missing(copy, m, err);
}

int rs_mkdir_parents_made(const char *path, size_t *made, rs_error *err)
{
    made_dirs m = { 0755, false, 0 };
    int rc = mkdir_parents(path, &m, err);

    *made = m.made;
    return rc;
}

int rs_mkdir_parents_mode(const char *path, mode_t mode, size_t *made, rs_error *err)
{
    made_dirs m = { mode, true, 0 };
    int rc = mkdir_parents(path, &m, err);

    *made = m.made;
    return rc;
}

/* One directory on the way to a service's output: only this process's
 * user and root may replace what is in it, unless it is sticky (then no
 * one may replace another's entries) and not the output itself. */
static int check_unshared(const char *path, bool itself, rs_error *err)
{
    struct stat st;

    if (stat(path, &st) < 0)
        return rs_fail_sys(err, errno, "%s: %s", path, strerror(errno));
    if (st.st_uid != 0 && st.st_uid != geteuid())
        return rs_fail(err, "%s: owned by uid %u, who could replace what is written below it", path,
                       (unsigned)st.st_uid);
    if ((st.st_mode & 022) && (itself || !(st.st_mode & S_ISVTX)))
        return rs_fail(err, "%s: mode %04o lets other users replace what is written below it (chmod go-w it)",
                       path, (unsigned)(st.st_mode & 07777));
    return 0;
}

int rs_dir_check_unshared(const char *path, rs_error *err)
{
    _cleanup_free_ char *real = realpath(path, NULL);
    char *slash;

    if (!real)
        return errno == ENOENT ? 0 : rs_fail_sys(err, errno, "%s: %s", path, strerror(errno));
    for (bool itself = true;; itself = false) {
        if (check_unshared(*real ? real : "/", itself, err) < 0)
            return itself ? -1 : rs_error_prefix(err, "%s", path);
        if (!*real || !(slash = strrchr(real, '/')))
            return 0;
        *slash = '\0';
    }
}

int rs_dir_open_nofollow(const char *path, int *fd, rs_error *err)
{
    struct stat st;

    if ((*fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0)
        return 0;
    if ((errno == ELOOP || errno == ENOTDIR) && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
        return rs_fail(err, "%s: a symbolic link; refused, as whoever can replace it chooses where files go", path);
    return rs_fail_sys(err, errno, "%s: %s", path, strerror(errno));
}

int rs_mkdir_parents(const char *path, rs_error *err)
{
    size_t made;

    return rs_mkdir_parents_made(path, &made, err);
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
        return rs_fail_sys(err, errno, "%s: %s", path, strerror(errno));
    if (rs_write_all(fd, data, len) < 0) {
        int e = errno;

        unlink(path);
        return rs_fail_sys(err, e, "%s: write failed: %s", path, strerror(e));
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

char *rs_path_join(const char *a, const char *b)
{
    char *p;

    return asprintf(&p, "%s/%s", a, b) < 0 ? NULL : p;
}

bool rs_name_has_suffix(const char *name, const char *suffix)
{
    size_t n = strlen(name), k = strlen(suffix);

    return n > k && !strcmp(name + n - k, suffix);
}

int rs_sync_path(const char *path, rs_error *err)
{
    _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0 || fsync(fd) < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    return 0;
}

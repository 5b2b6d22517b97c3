#include "pipeline/source_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"

/* One file of a source template. Debian's largest, linux's
 * debian/changelog, is 4.3 MB (6.12, 2025) and grows ~0.3 MB a year;
 * 256 MiB is sixty times that and still far from filling a disk. */
#define RS_MAX_SOURCE_FILE (256ull * 1024 * 1024)

#define NOT_ALLOWED "special files are not allowed in a source template"

typedef struct copy_ctx {
    const char *root;      /* the template root; errors name files as source-template/REL */
    char *root_real;       /* realpath() of it */
} copy_ctx;

bool rs_symlink_stays_inside(const char *link_rel, const char *target)
{
    int depth = 0;
    const char *p;

    if (!target[0] || target[0] == '/')
        return false;
    /* The directories above the link, then the target's components. */
    for (p = link_rel; (p = strchr(p, '/')) != NULL; p++)
        depth++;
    for (p = target; *p;) {
        size_t n = strcspn(p, "/");

        if (n == 2 && !strncmp(p, "..", 2)) {
            if (--depth < 0)
                return false;
        } else if (n && !(n == 1 && p[0] == '.')) {
            depth++;
        }
        p += n;
        p += *p == '/';
    }
    return true;
}

/* The link's target must exist inside the template once resolved. */
static int check_symlink(copy_ctx *c, int dir, const char *name, const char *rel, char *target, rs_error *err)
{
    _cleanup_free_ char *path = NULL, *real = NULL;
    size_t n = strlen(c->root_real);
    ssize_t len = readlinkat(dir, name, target, PATH_MAX - 1);

    if (len < 0)
        return rs_fail(err, "source-template/%s: %s", rel, strerror(errno));
    target[len] = '\0';
    if (target[0] == '/')
        return rs_fail(err, "source-template/%s: symlink to %s is absolute", rel, target);
    if (!rs_symlink_stays_inside(rel, target))
        return rs_fail(err, "source-template/%s: symlink to %s escapes the source template", rel, target);
    if (!(path = rs_path_join(c->root, rel)))
        return rs_fail(err, "out of memory");
    if (!(real = realpath(path, NULL)))
        return rs_fail(err, "source-template/%s: symlink to %s dangles", rel, target);
    if (strncmp(real, c->root_real, n) != 0 || (real[n] != '/' && real[n] != '\0'))
        return rs_fail(err, "source-template/%s: symlink to %s escapes the source template", rel, target);
    return 0;
}

/* Streamed: a source template's files are never held whole. */
static int copy_file_at(copy_ctx *c, int dir, const char *name, const char *rel, const char *dst, mode_t mode,
                        rs_error *err)
{
    _cleanup_close_ int in = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
    _cleanup_close_ int out = -1;
    char buf[64 * 1024];
    uint64_t total = 0;
    ssize_t got;

    if (in < 0)
        return rs_fail(err, "source-template/%s: %s", rel, errno == ELOOP ? NOT_ALLOWED : strerror(errno));
    if ((out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)) < 0)
        return rs_fail(err, "%s: %s", dst, strerror(errno));
    while ((got = read(in, buf, sizeof(buf))) != 0) {
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return rs_fail(err, "source-template/%s: %s", rel, strerror(errno));
        if ((total += (uint64_t)got) > RS_MAX_SOURCE_FILE)
            return rs_fail(err, "source-template/%s: over the limit of %llu bytes for a source template file", rel,
                           RS_MAX_SOURCE_FILE);
        if (rs_write_all(out, buf, (size_t)got) < 0)
            return rs_fail(err, "%s: %s", dst, strerror(errno));
    }
    return 0;
}

static int copy_dir_at(copy_ctx *c, int from, const char *rel, const char *to, rs_error *err);

static int copy_entry(copy_ctx *c, int from, const char *parent_rel, const char *name, const char *to, rs_error *err)
{
    _cleanup_free_ char *rel = NULL, *dst = NULL;
    _cleanup_close_ int sub = -1;
    char target[PATH_MAX];
    struct stat st;

    if (asprintf(&rel, "%s%s%s", parent_rel, *parent_rel ? "/" : "", name) < 0 ||
        !(dst = rs_path_join(to, name)))
        return rs_fail(err, "out of memory");
    if (fstatat(from, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return rs_fail(err, "source-template/%s: %s", rel, strerror(errno));
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > RS_MAX_SOURCE_FILE)
        return rs_fail(err, "source-template/%s: %llu bytes, over the limit of %llu for a source template file", rel,
                       (unsigned long long)st.st_size, RS_MAX_SOURCE_FILE);
    if (S_ISREG(st.st_mode))
        return copy_file_at(c, from, name, rel, dst, (st.st_mode & 0111) ? 0755 : 0644, err);
    if (S_ISLNK(st.st_mode)) {
        if (check_symlink(c, from, name, rel, target, err) < 0)
            return -1;
        return symlink(target, dst) < 0 ? rs_fail(err, "%s: %s", dst, strerror(errno)) : 0;
    }
    if (!S_ISDIR(st.st_mode))
        return rs_fail(err, "source-template/%s: " NOT_ALLOWED, rel);
    if ((sub = openat(from, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return rs_fail(err, "source-template/%s: %s", rel, strerror(errno));
    return copy_dir_at(c, sub, rel, dst, err);
}

static int copy_dir_at(copy_ctx *c, int from, const char *rel, const char *to, rs_error *err)
{
    struct dirent **names = NULL;
    int n = scandirat(from, ".", &names, NULL, alphasort), rc = 0;

    if (n < 0)
        return rs_fail(err, "source-template/%s: %s", rel, strerror(errno));
    if (mkdir(to, 0755) < 0 && errno != EEXIST)
        rc = rs_fail(err, "%s: %s", to, strerror(errno));
    for (int i = 0; i < n; i++) {
        if (rc == 0 && strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, ".."))
            rc = copy_entry(c, from, rel, names[i]->d_name, to, err);
        free(names[i]);
    }
    free(names);
    return rc;
}

int rs_copy_source_tree(const char *from, const char *to, rs_error *err)
{
    _cleanup_close_ int fd = open(from, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    copy_ctx c = { from, NULL };
    int rc;

    if (fd < 0)
        return rs_fail(err, "%s: %s", from, strerror(errno));
    if (!(c.root_real = realpath(from, NULL)))
        return rs_fail(err, "%s: %s", from, strerror(errno));
    rc = copy_dir_at(&c, fd, "", to, err);
    free(c.root_real);
    return rc;
}

/* Opening a path below a directory without leaving it (file.h). */
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/cleanup.h"

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

/* A walk in progress: the directories it has entered below its root
 * (innermost last), what remains of the path, and the first error. */
typedef struct walk {
    int root;
    int fd[WALK_MAX_DEPTH];
    size_t depth;
    char *rest;
    int hops;
    int e;
} walk;

static void walk_close(walk *w)
{
    while (w->depth)
        close(w->fd[--w->depth]);
}

static int walk_cur(const walk *w)
{
    return w->depth ? w->fd[w->depth - 1] : w->root;
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

/* A symlink at comp (which points into w->rest at after): its target is
 * walked in its place, before what came after it; returns where to go on. */
static char *follow(walk *w, const char *comp, const char *after, rs_error *err)
{
    char target[PATH_MAX], *joined;
    ssize_t n;

    if (++w->hops > WALK_MAX_HOPS) {
        w->e = ELOOP;
        return NULL;
    }
    if ((n = readlinkat(walk_cur(w), comp, target, sizeof(target) - 1)) < 0) {
        w->e = errno;
        return NULL;
    }
    target[n] = '\0';
    if (target[0] == '/') {
        w->e = EXDEV;
        return NULL;
    }
    if (!(joined = rs_path_join(target, after))) {
        rs_fail(err, "out of memory");
        return NULL;
    }
    free(w->rest);
    return w->rest = joined;
}

static void step_up(walk *w, bool last)
{
    if (!w->depth)
        w->e = EXDEV;
    else
        close(w->fd[--w->depth]);
    if (!w->e && last)
        w->e = EISDIR;
}

/* O_NOFOLLOW: a symlink put there since the fstatat is refused. */
static void step_into(walk *w, const char *comp, const struct stat *st)
{
    int d = openat(walk_cur(w), comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

    if (d < 0)
        w->e = errno == ENOTDIR && S_ISDIR(st->st_mode) ? ELOOP : errno;
    else if (w->depth == WALK_MAX_DEPTH) {
        close(d);
        w->e = ENAMETOOLONG;
    } else
        w->fd[w->depth++] = d;
}

static int open_last(walk *w, const char *comp)
{
    int f = openat(walk_cur(w), comp, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);

    if (f < 0)
        w->e = errno;
    return f;
}

/* One component, not "." or ".."; the file's descriptor once the last is
 * opened, -1 otherwise. *pos moves to the target of a symlink followed. */
static int step(walk *w, const char *comp, bool last, char **pos, const rs_beneath_opts *opts, rs_error *err)
{
    struct stat st;

    if (fstatat(walk_cur(w), comp, &st, AT_SYMLINK_NOFOLLOW) < 0)
        w->e = errno;
    else if (S_ISLNK(st.st_mode) && opts->no_symlinks)
        w->e = ELOOP;
    else if (S_ISLNK(st.st_mode)) {
        char *next = follow(w, comp, *pos, err);

        if (next)
            *pos = next;
        else if (!w->e)
            return -2;
    } else if (!last)
        step_into(w, comp, &st);
    else
        return open_last(w, comp);
    return -1;
}

static int walk_beneath(int dir, const char *dir_name, const char *rel, const rs_beneath_opts *opts, int *fd,
                        rs_error *err)
{
    walk w = { .root = dir, .rest = strdup(rel) };
    char *pos, *comp;
    bool last = false;
    int f = -1;

    if (!w.rest)
        return rs_fail(err, "out of memory");
    if (rel[0] == '/')
        w.e = EXDEV;
    for (pos = take_component(w.rest, &comp, &last); comp && !w.e && f < 0; pos = take_component(pos, &comp, &last)) {
        if (!strcmp(comp, "..") )
            step_up(&w, last);
        else if (strcmp(comp, ".") || last)
            f = step(&w, comp, last, &pos, opts, err);
    }
    walk_close(&w);
    free(w.rest);
    if (f == -2)
        return -1;
    if (!w.e && f < 0)
        w.e = EISDIR;
    if (w.e)
        return refuse_open(w.e, dir_name, err);
    *fd = f;
    return 0;
}

static int openat2_beneath(int dir, const char *dir_name, const char *rel, const rs_beneath_opts *opts, int *fd,
                           rs_error *err)
{
    struct open_how how = {
        .flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,   /* a FIFO put in place cannot hang it */
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | (opts->no_symlinks ? RESOLVE_NO_SYMLINKS : 0),
    };
    long f = syscall(SYS_openat2, dir, rel, &how, sizeof(how));

    if (f >= 0) {
        *fd = (int)f;
        return 0;
    }
    if (errno == ENOSYS || errno == EPERM)
        return walk_beneath(dir, dir_name, rel, opts, fd, err);
    return refuse_open(errno, dir_name, err);
}

int rs_open_beneath_with(int dir, const char *dir_name, const char *rel, const rs_beneath_opts *opts, int *fd,
                         rs_error *err)
{
    if (opts->walk)
        return walk_beneath(dir, dir_name, rel, opts, fd, err);
    return openat2_beneath(dir, dir_name, rel, opts, fd, err);
}

int rs_open_beneath(int dir, const char *dir_name, const char *rel, int *fd, rs_error *err)
{
    static const rs_beneath_opts follow_inside = { .no_symlinks = false };

    return openat2_beneath(dir, dir_name, rel, &follow_inside, fd, err);
}

int rs_open_beneath_no_symlinks(int dir, const char *dir_name, const char *rel, int *fd, rs_error *err)
{
    static const rs_beneath_opts no_symlinks = { .no_symlinks = true };

    return openat2_beneath(dir, dir_name, rel, &no_symlinks, fd, err);
}

#include "pipeline/tarball.h"

#include <dirent.h>
#include <locale.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive_lib.h"
#include "base/cleanup.h"
#include "base/file.h"
#include "base/walk.h"

struct rs_tarball {
    struct archive *a;
    rs_output out;
    time_t mtime;
    char *last;        /* the last file added: its directories are written */
};

static void entry_freep(struct archive_entry **e)
{
    if (*e)
        sym_archive_entry_free(*e);
}

static int tar_fail(struct archive *a, rs_error *err)
{
    return rs_fail_sys(err, sym_archive_errno(a), "cannot write tarball: %s",
                       sym_archive_error_string(a) ? sym_archive_error_string(a) : "?");
}

/* type: AE_IFDIR or AE_IFREG. */
static int add_header(struct archive *a, const char *name, unsigned type, int64_t size, time_t mtime, rs_error *err)
{
    _cleanup_(entry_freep) struct archive_entry *e = sym_archive_entry_new();

    if (!e)
        return rs_fail(err, "out of memory");
    sym_archive_entry_set_pathname(e, name);
    sym_archive_entry_set_filetype(e, type);
    sym_archive_entry_set_perm(e, type == AE_IFDIR ? 0755 : 0644);
    sym_archive_entry_set_size(e, type == AE_IFDIR ? 0 : size);
    sym_archive_entry_set_uid(e, 0);
    sym_archive_entry_set_gid(e, 0);
    sym_archive_entry_set_uname(e, "root");
    sym_archive_entry_set_gname(e, "root");
    sym_archive_entry_set_mtime(e, mtime, 0);
    if (sym_archive_write_header(a, e) != ARCHIVE_OK)
        return tar_fail(a, err);
    return 0;
}

void rs_tarball_free(rs_tarball *t)
{
    if (!t)
        return;
    if (t->a)
        sym_archive_write_free(t->a);
    rs_output_abort(&t->out);
    free(t->last);
    free(t);
}

DEFINE_POINTER_CLEANUP(tarball_freep, rs_tarball, rs_tarball_free)

int rs_tarball_open(rs_tarball **out, const char *output, time_t mtime, rs_error *err)
{
    _cleanup_(tarball_freep) rs_tarball *t = calloc(1, sizeof(*t));

    if (!t)
        return rs_fail(err, "out of memory");
    t->out.fd = -1;
    t->mtime = mtime;
    if (rs_archive_load(err) < 0)
        return -1;
    if (!(t->a = sym_archive_write_new()))
        return rs_fail(err, "out of memory");
    if (rs_output_open(&t->out, output, 0644, err) < 0)
        return rs_error_prefix(err, "%s", output);
    /* No time in the gzip header: the same inputs give the same bytes. */
    if (sym_archive_write_set_format_pax_restricted(t->a) != ARCHIVE_OK ||
        sym_archive_write_add_filter_gzip(t->a) != ARCHIVE_OK ||
        sym_archive_write_set_filter_option(t->a, "gzip", "timestamp", NULL) != ARCHIVE_OK ||
        sym_archive_write_set_filter_option(t->a, "gzip", "compression-level", "1") != ARCHIVE_OK ||
        sym_archive_write_set_bytes_in_last_block(t->a, 1) != ARCHIVE_OK ||
        sym_archive_write_open_fd(t->a, t->out.fd) != ARCHIVE_OK)
        return tar_fail(t->a, err);
    *out = TAKE_PTR(t);
    return 0;
}

int rs_tarball_commit(rs_tarball *t, rs_error *err)
{
    if (sym_archive_write_close(t->a) != ARCHIVE_OK)
        return tar_fail(t->a, err);
    return rs_output_commit(&t->out, err);
}

int rs_tarball_suffixed_cmp(const char *a, const char *b, const char *suffix)
{
    const char *sa = suffix, *sb = suffix;
    int ra, rb;

    /* Where a string ends, its suffix goes on; where that ends, the end. */
    for (;;) {
        if (!*a && *sa)
            a = sa, sa = "";
        if (!*b && *sb)
            b = sb, sb = "";
        if (!*a || *a != *b)
            break;
        a++, b++;
    }
    /* Ranks: the end of the path, then '/', then every other byte. */
    ra = !*a ? 0 : *a == '/' ? 1 : 2 + (unsigned char)*a;
    rb = !*b ? 0 : *b == '/' ? 1 : 2 + (unsigned char)*b;
    return ra - rb;
}

int rs_tarball_path_cmp(const char *a, const char *b)
{
    return rs_tarball_suffixed_cmp(a, b, "");
}

/* Entries out of order would break the directory bookkeeping below, and
 * a name used as both file and directory cannot be unpacked. */
static int check_order(const rs_tarball *t, const char *path, rs_error *err)
{
    size_t n = t->last ? strlen(t->last) : 0;

    if (t->last && rs_tarball_path_cmp(t->last, path) >= 0)
        return rs_fail(err, "%s: added twice or out of order", path);
    if (t->last && !strncmp(t->last, path, n) && path[n] == '/')
        return rs_fail(err, "%s: is a file and a directory", t->last);
    return 0;
}

/* The directories above path that the last file did not share: in
 * depth-first order no other directory can have been written yet. */
static int add_parents(rs_tarball *t, const char *path, rs_error *err)
{
    for (const char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) {
        size_t n = (size_t)(s - path);
        _cleanup_free_ char *dir = NULL;

        if (t->last && !strncmp(t->last, path, n) && t->last[n] == '/')
            continue;
        if (!(dir = strndup(path, n)))
            return rs_fail(err, "out of memory");
        if (add_header(t->a, dir, AE_IFDIR, 0, t->mtime, err) < 0)
            return -1;
    }
    return 0;
}

int rs_tarball_add_file(rs_tarball *t, const char *path, const void *data, size_t len, rs_error *err)
{
    char *copy;

    if (check_order(t, path, err) < 0 || add_parents(t, path, err) < 0 ||
        add_header(t->a, path, AE_IFREG, (int64_t)len, t->mtime, err) < 0)
        return -1;
    if (len && sym_archive_write_data(t->a, data, len) != (la_ssize_t)len)
        return tar_fail(t->a, err);
    if (!(copy = strdup(path)))
        return rs_fail(err, "out of memory");
    free(t->last);
    t->last = copy;
    return 0;
}

/* ---- from a directory tree ---- */

static int add_data(struct archive *a, const char *path, rs_error *err)
{
    _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    char buf[64 * 1024];
    ssize_t n;

    if (fd < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    while ((n = read(fd, buf, sizeof(buf))) > 0)
        if (sym_archive_write_data(a, buf, (size_t)n) != n)
            return tar_fail(a, err);
    return n < 0 ? rs_fail(err, "%s: %s", path, strerror(errno)) : 0;
}

typedef struct tree_adder {
    struct archive *a;
    time_t mtime;
} tree_adder;

/* The walk goes depth first with names in byte order, so the order never
 * depends on the file system (alphasort compares bytes in the C locale,
 * which reprosign never leaves). */
static int add_entry(void *ctx, const char *rel, const char *path, const struct stat *st, rs_error *err)
{
    tree_adder *t = ctx;

    if (!S_ISDIR(st->st_mode) && !S_ISREG(st->st_mode))
        return rs_fail(err, "%s: not a regular file or directory", path);
    if (add_header(t->a, rel, S_ISDIR(st->st_mode) ? AE_IFDIR : AE_IFREG, st->st_size, t->mtime, err) < 0)
        return -1;
    return S_ISDIR(st->st_mode) ? 0 : add_data(t->a, path, err);
}

rs_names_locale rs_tarball_utf8_names_begin(void)
{
    rs_names_locale n = { newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0), (locale_t)0 };

    if (n.utf8)
        n.previous = uselocale(n.utf8);
    return n;
}

void rs_tarball_utf8_names_end(rs_names_locale n)
{
    if (!n.utf8)
        return;
    uselocale(n.previous);
    freelocale(n.utf8);
}

static int write_tree(const char *dir, const char *output, time_t mtime, rs_error *err)
{
    _cleanup_(tarball_freep) rs_tarball *t = NULL;
    tree_adder adder = { NULL, mtime };

    if (rs_tarball_open(&t, output, mtime, err) < 0)
        return -1;
    adder.a = t->a;
    if (rs_walk_tree(dir, NULL, add_entry, &adder, err) < 0)
        return rs_error_prefix(err, "%s", output);
    return rs_tarball_commit(t, err);
}

int rs_tarball_write(const char *dir, const char *output, time_t mtime, rs_error *err)
{
    rs_names_locale n = rs_tarball_utf8_names_begin();
    int rc = write_tree(dir, output, mtime, err);

    rs_tarball_utf8_names_end(n);
    return rc;
}

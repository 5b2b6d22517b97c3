#include "pipeline/tarball.h"

#include <dirent.h>
#include <locale.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "pipeline/archive_lib.h"
#include "base/file.h"

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
    return rs_fail(err, "cannot write tarball: %s", sym_archive_error_string(a) ? sym_archive_error_string(a) : "?");
}

static int add_header(struct archive *a, const char *name, bool dir, int64_t size, time_t mtime, rs_error *err)
{
    _cleanup_(entry_freep) struct archive_entry *e = sym_archive_entry_new();

    if (!e)
        return rs_fail(err, "out of memory");
    sym_archive_entry_set_pathname(e, name);
    sym_archive_entry_set_filetype(e, dir ? AE_IFDIR : AE_IFREG);
    sym_archive_entry_set_perm(e, dir ? 0755 : 0644);
    sym_archive_entry_set_size(e, dir ? 0 : size);
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
    /* Signatures hardly compress: preset 0 gives the same size as the
     * default 6 in a quarter of the time and a tenth of the memory. */
    if (sym_archive_write_set_format_pax_restricted(t->a) != ARCHIVE_OK ||
        sym_archive_write_add_filter_xz(t->a) != ARCHIVE_OK ||
        sym_archive_write_set_filter_option(t->a, "xz", "compression-level", "0") != ARCHIVE_OK ||
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

int rs_tarball_path_cmp(const char *a, const char *b)
{
    int ra, rb;

    while (*a && *a == *b)
        a++, b++;
    /* Ranks: the end of the path, then '/', then every other byte. */
    ra = !*a ? 0 : *a == '/' ? 1 : 2 + (unsigned char)*a;
    rb = !*b ? 0 : *b == '/' ? 1 : 2 + (unsigned char)*b;
    return ra - rb;
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
        if (add_header(t->a, dir, true, 0, t->mtime, err) < 0)
            return -1;
    }
    return 0;
}

int rs_tarball_add_file(rs_tarball *t, const char *path, const void *data, size_t len, rs_error *err)
{
    char *copy;

    if (check_order(t, path, err) < 0 || add_parents(t, path, err) < 0 ||
        add_header(t->a, path, false, (int64_t)len, t->mtime, err) < 0)
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

/* Depth-first, names in byte order, so the order never depends on the
 * file system (alphasort compares bytes in the C locale, which reprosign
 * never leaves). */
static int add_tree(struct archive *a, const char *root, const char *rel, time_t mtime, rs_error *err)
{
    _cleanup_free_ char *dir = NULL;
    struct dirent **names = NULL;
    int n, rc = 0;

    if (asprintf(&dir, "%s%s%s", root, *rel ? "/" : "", rel) < 0)
        return rs_fail(err, "out of memory");
    n = scandir(dir, &names, NULL, alphasort);
    if (n < 0)
        return rs_fail(err, "%s: %s", dir, strerror(errno));
    for (int i = 0; i < n; i++) {
        _cleanup_free_ char *child = NULL, *path = NULL;
        const char *name = names[i]->d_name;
        struct stat st;

        if (rc < 0 || !strcmp(name, ".") || !strcmp(name, ".."))
            continue;
        if (asprintf(&child, "%s%s%s", rel, *rel ? "/" : "", name) < 0 || asprintf(&path, "%s/%s", root, child) < 0)
            rc = rs_fail(err, "out of memory");
        else if (lstat(path, &st) < 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
            rc = rs_fail(err, "%s: not a regular file or directory", path);
        else if (add_header(a, child, S_ISDIR(st.st_mode), st.st_size, mtime, err) < 0)
            rc = -1;
        else if (S_ISDIR(st.st_mode))
            rc = add_tree(a, root, child, mtime, err);
        else
            rc = add_data(a, path, err);
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

/* Names are UTF-8. libarchive converts them through the calling thread's
 * locale, and in reprosign's C locale it refuses any name that is not
 * ASCII; the thread writing entries uses C.UTF-8 instead, which leaves
 * ASCII names exactly as they were. */
typedef struct names_locale {
    locale_t utf8, previous;
} names_locale;

static names_locale utf8_names_begin(void)
{
    names_locale n = { newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0), (locale_t)0 };

    if (n.utf8)
        n.previous = uselocale(n.utf8);
    return n;
}

static void utf8_names_end(names_locale n)
{
    if (!n.utf8)
        return;
    uselocale(n.previous);
    freelocale(n.utf8);
}

static int write_tree(const char *dir, const char *output, time_t mtime, rs_error *err)
{
    _cleanup_(tarball_freep) rs_tarball *t = NULL;

    if (rs_tarball_open(&t, output, mtime, err) < 0)
        return -1;
    if (add_tree(t->a, dir, "", mtime, err) < 0)
        return rs_error_prefix(err, "%s", output);
    return rs_tarball_commit(t, err);
}

int rs_tarball_write(const char *dir, const char *output, time_t mtime, rs_error *err)
{
    names_locale n = utf8_names_begin();
    int rc = write_tree(dir, output, mtime, err);

    utf8_names_end(n);
    return rc;
}

/* ---- written on its own thread ---- */

/* A wakeup costs more than writing an entry: the writer waits for a run
 * of entries, not for each one. */
#define FEED_RUN 32

struct rs_tarball_feed {
    rs_tarball *t;
    char *output;
    time_t mtime;
    rs_tarball_entry entry;
    void *ctx;
    size_t n;
    bool *ready;
    size_t done;          /* files 0..done-1 are all ready */
    size_t wake_at;       /* the writer sleeps until done reaches this */
    bool stop;
    bool running;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int rc;
    rs_error err;
};

/* How many files, from the first, are ready once file k is; 0 if stopped. */
static size_t feed_wait(rs_tarball_feed *f, size_t k)
{
    size_t avail;

    pthread_mutex_lock(&f->lock);
    f->wake_at = k + FEED_RUN < f->n ? k + FEED_RUN : f->n;
    while (f->done <= k && !f->stop)
        pthread_cond_wait(&f->cond, &f->lock);
    avail = f->stop ? 0 : f->done;
    pthread_mutex_unlock(&f->lock);
    return avail;
}

static void feed_run(rs_tarball_feed *f)
{
    size_t k = 0, avail;

    /* Opened here, so loading libarchive overlaps with the caller's work. */
    if (rs_tarball_open(&f->t, f->output, f->mtime, &f->err) < 0) {
        f->rc = -1;
        return;
    }
    while (k < f->n && (avail = feed_wait(f, k)) > 0)
        for (; k < avail; k++) {
            const char *path;
            const void *data;
            size_t len;

            f->entry(f->ctx, k, &path, &data, &len);
            if (rs_tarball_add_file(f->t, path, data, len, &f->err) < 0) {
                f->rc = -1;
                return;
            }
        }
}

static void *feed_main(void *arg)
{
    names_locale n = utf8_names_begin();

    feed_run(arg);
    utf8_names_end(n);
    return NULL;
}

void rs_tarball_feed_ready(rs_tarball_feed *f, size_t k)
{
    pthread_mutex_lock(&f->lock);
    f->ready[k] = true;
    while (f->done < f->n && f->ready[f->done])
        f->done++;
    if (f->done >= f->wake_at)
        pthread_cond_signal(&f->cond);
    pthread_mutex_unlock(&f->lock);
}

static void feed_join(rs_tarball_feed *f, bool stop)
{
    if (!f->running)
        return;
    pthread_mutex_lock(&f->lock);
    f->stop |= stop;
    pthread_cond_signal(&f->cond);
    pthread_mutex_unlock(&f->lock);
    pthread_join(f->thread, NULL);
    f->running = false;
}

void rs_tarball_feed_free(rs_tarball_feed *f)
{
    if (!f)
        return;
    feed_join(f, true);
    rs_tarball_free(f->t);
    pthread_cond_destroy(&f->cond);
    pthread_mutex_destroy(&f->lock);
    free(f->output);
    free(f->ready);
    free(f);
}

DEFINE_POINTER_CLEANUP(feed_freep, rs_tarball_feed, rs_tarball_feed_free)

int rs_tarball_feed_start(rs_tarball_feed **out, const char *output, time_t mtime, size_t n, rs_tarball_entry entry,
                          void *ctx, rs_error *err)
{
    _cleanup_(feed_freep) rs_tarball_feed *f = calloc(1, sizeof(*f));
    int e;

    if (!f)
        return rs_fail(err, "out of memory");
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->cond, NULL);
    f->mtime = mtime;
    f->entry = entry;
    f->ctx = ctx;
    f->n = n;
    if (!(f->ready = calloc(n ? n : 1, sizeof(bool))) || !(f->output = strdup(output)))
        return rs_fail(err, "out of memory");
    if ((e = pthread_create(&f->thread, NULL, feed_main, f)) != 0)
        return rs_fail(err, "cannot start a thread: %s", strerror(e));
    f->running = true;
    *out = TAKE_PTR(f);
    return 0;
}

int rs_tarball_feed_finish(rs_tarball_feed *f, rs_error *err)
{
    feed_join(f, false);
    if (f->rc < 0) {
        *err = f->err;
        return -1;
    }
    return rs_tarball_commit(f->t, err);
}

#include "pipeline/attach_tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "base/strpool.h"
#include "base/walk.h"
#include "crypto/ossl.h"
#include "formats/format.h"
#include "pipeline/batch.h"

#define MAX_SIG (1024 * 1024)

/* A file as it was checked, to write the same one: ctime cannot be set
 * back, so a file written since its check differs from it here even when
 * its size and mtime were restored. */
typedef struct file_id {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
} file_id;

/* Kept for every file from its check to its rename, so it holds no
 * signature: each is read again to be written, and must hash the same. */
typedef struct entry {
    char *rel;            /* <path>, relative to root; in the job's pool */
    char *write_path;     /* in place: the file itself, through any symlinks */
    unsigned char sig_sha256[32];
    char *problem;        /* why it does not fit, or NULL */
    bool carried;         /* the file already carries this very signature */
    rs_output out;        /* sealed temporary, renamed at the end */
    file_id checked;
} entry;

typedef struct tree_job {
    const rs_attach_tree_options *o;
    int root_fd;          /* targets are opened beneath it: none may lead out of the root */
    bool in_place;        /* new bytes are renamed over the files themselves */
    volatile bool needs_cert;   /* a signature carries no certificate, and none was given */
    entry *entries;
    size_t count, cap;
    rs_strpool names;
} tree_job;

static int add_entry(tree_job *t, const char *rel, rs_error *err)
{
    if (t->count == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        entry *n = realloc(t->entries, cap * sizeof(*n));

        if (!n)
            return rs_fail(err, "out of memory");
        t->entries = n;
        t->cap = cap;
    }
    memset(&t->entries[t->count], 0, sizeof(entry));
    t->entries[t->count].out.fd = -1;
    if (!(t->entries[t->count].rel = rs_strpool_dup(&t->names, rel)))
        return rs_fail(err, "out of memory");
    t->entries[t->count].rel[strlen(rel) - 4] = '\0';   /* drop ".sig" */
    t->count++;
    return 0;
}

/* Collects every <path>.sig below dir, in a stable order. */
/* Every NAME.sig below the signatures directory; a link or a special file
 * is refused: skipped, it would leave its file unsigned without a word. */
static int collect(void *ctx, const char *rel, const char *path, const struct stat *st, rs_error *err)
{
    if (S_ISDIR(st->st_mode) || !rs_name_has_suffix(rel, ".sig"))
        return 0;
    return S_ISREG(st->st_mode) ? add_entry(ctx, rel, err) : rs_fail(err, "%s: not a regular file", path);
}

static char *joined_path(const char *base, const entry *e, const char *suffix)
{
    char *p;

    return asprintf(&p, "%s/%s%s", base, e->rel, suffix) < 0 ? NULL : p;
}

/* The file as found below the root. */
static char *target_path(const tree_job *t, const entry *e)
{
    return joined_path(t->o->root, e, "");
}

/* Where it goes when written elsewhere or under another name. */
static char *output_path(const tree_job *t, const entry *e)
{
    return joined_path(t->o->output ? t->o->output : t->o->root, e, t->o->suffix ? t->o->suffix : "");
}

/* Where the signed file goes: in place, the file itself; else
 * <output>/<path><suffix>. */
static char *write_path(const tree_job *t, const entry *e)
{
    return e->write_path ? strdup(e->write_path) : output_path(t, e);
}

static int note_problem(entry *e, const char *path, const rs_error *why)
{
    const char *msg = why->msg;

    /* Messages from the image layer already start with the path. */
    if (!strncmp(msg, path, strlen(path)) && msg[strlen(path)] == ':')
        e->problem = strdup(msg);
    else if (asprintf(&e->problem, "%s: %s", path, msg) < 0)
        e->problem = NULL;
    return 0;
}

/* A target file, opened beneath the root (symlinks inside it are followed). */
static int open_target(const tree_job *t, const entry *e, const char *path, rs_image *img, rs_error *err)
{
    int fd;

    if (rs_open_beneath(t->root_fd, t->o->root, e->rel, &fd, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return rs_image_open_fd(img, fd, path, err);
}

/* In place: no OUTROOT, or ROOT itself given as OUTROOT. */
static bool writes_in_place(const tree_job *t)
{
    struct stat root, out;

    if (t->o->suffix)
        return false;
    if (!t->o->output)
        return true;
    return fstat(t->root_fd, &root) == 0 && stat(t->o->output, &out) == 0 && root.st_dev == out.st_dev &&
           root.st_ino == out.st_ino;
}

static file_id file_id_of(const struct stat *st)
{
    return (file_id){ st->st_dev, st->st_ino, st->st_size, st->st_mtim, st->st_ctim };
}

static bool same_file(const file_id *a, const file_id *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
           a->mtime.tv_nsec == b->mtime.tv_nsec && a->ctime.tv_sec == b->ctime.tv_sec &&
           a->ctime.tv_nsec == b->ctime.tv_nsec;
}

/* Whether the image already carries these exact bytes among its
 * signatures: a second run over a tree (after an interrupted one, say)
 * then leaves the file alone instead of adding the same signature again. */
static int carries(rs_image *img, const rs_bytes *sig, bool *found, rs_error *err)
{
    size_t n = img->format->count(img);

    *found = false;
    for (size_t k = 0; k < n && !*found; k++) {
        _cleanup_bytes_ rs_bytes have = { 0 };

        if (img->format->extract(img, k, &have, err) < 0)
            return -1;
        *found = have.len == sig->len && !memcmp(have.data, sig->data, sig->len);
    }
    return 0;
}

static int check_one(void *ctx, size_t i, rs_error *err)
{
    tree_job *t = ctx;
    entry *e = &t->entries[i];
    _cleanup_free_ char *sig_path = joined_path(t->o->signatures, e, ".sig"), *path = target_path(t, e);
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    _cleanup_bytes_ rs_bytes sig = { 0 };
    struct stat st;
    rs_error why;
    size_t max;
    uint64_t before;

    if (!path || !sig_path)
        return rs_fail(err, "out of memory");
    if (rs_read_file(sig_path, MAX_SIG, &sig, &why) < 0) {
        rs_error_prefix(&why, "%s", sig_path);
        return note_problem(e, sig_path, &why);
    }
    rs_sha256(sig.data, sig.len, e->sig_sha256);
    if (open_target(t, e, path, &img, &why) < 0)
        return note_problem(e, path, &why);
    if (fstat(img.in.fd, &st) < 0) {
        rs_fail(&why, "%s", strerror(errno));
        return note_problem(e, path, &why);
    }
    e->checked = file_id_of(&st);
    if (t->in_place && rs_replace_path(path, img.in.fd, &e->write_path, &why) < 0)
        return note_problem(e, path, &why);
    /* Said once for the whole tree, not once per module. */
    if (img.format->binding_needs_cert && !t->o->cert) {
        t->needs_cert = true;
        return rs_fail(err, "%s signatures carry no certificate: --cert is needed to check them",
                       img.format->name);
    }
    if (carries(&img, &sig, &e->carried, &why) < 0)
        return note_problem(e, path, &why);
    max = img.format->max_signatures;
    if (!e->carried && max && img.format->count(&img) >= max) {
        rs_fail(&why, "already carries a signature");
        return note_problem(e, path, &why);
    }
    before = rs_hashed_bytes();
    if (img.format->check_binding(&img, &sig, t->o->cert, &why) < 0)
        return note_problem(e, path, &why);
    rs_progress_hashed(t->o->progress, rs_hashed_bytes() - before);
    return 0;
}

/* The signature once more, as it was checked. */
static int read_checked_sig(const tree_job *t, const entry *e, rs_bytes *sig, rs_error *err)
{
    _cleanup_free_ char *path = joined_path(t->o->signatures, e, ".sig");
    unsigned char now[32];

    if (!path)
        return rs_fail(err, "out of memory");
    if (rs_read_file(path, MAX_SIG, sig, err) < 0)
        return rs_error_prefix(err, "%s", path);
    rs_sha256(sig->data, sig->len, now);
    if (memcmp(now, e->sig_sha256, sizeof(now)))
        return rs_fail(err, "%s: changed since it was checked; nothing was written", path);
    return 0;
}

static int write_one(void *ctx, size_t i, rs_error *err)
{
    tree_job *t = ctx;
    entry *e = &t->entries[i];
    _cleanup_free_ char *in = target_path(t, e), *out = NULL;
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    _cleanup_bytes_ rs_bytes sig = { 0 };
    rs_edit edit = { .remove_index = -1, .append = &sig, .n_append = e->carried ? 0 : 1 };
    struct stat st;
    file_id now;

    if (e->carried && t->in_place) {
        rs_progress_signed(t->o->progress);
        return 0;
    }
    if (!in || !(out = write_path(t, e)))
        return rs_fail(err, "out of memory");
    if (!e->carried && read_checked_sig(t, e, &sig, err) < 0)
        return -1;
    if (open_target(t, e, in, &img, err) < 0)
        return -1;
    if (fstat(img.in.fd, &st) < 0 || (now = file_id_of(&st), !same_file(&e->checked, &now)))
        return rs_fail(err, "%s: changed since its signature was checked; nothing was written", in);
    if (rs_mkdir_parents(out, err) < 0 || rs_output_open(&e->out, out, img.in.mode, err) < 0)
        return -1;
    if (img.format->write(&img, &edit, &e->out, err) < 0 || rs_output_seal(&e->out, err) < 0)
        return rs_error_prefix(err, "%s", out);
    rs_progress_signed(t->o->progress);
    return 0;
}

static int cmp_file(const void *a, const void *b)
{
    const entry *x = *(entry *const *)a, *y = *(entry *const *)b;

    if (x->checked.dev != y->checked.dev)
        return x->checked.dev < y->checked.dev ? -1 : 1;
    if (x->checked.ino != y->checked.ino)
        return x->checked.ino < y->checked.ino ? -1 : 1;
    return strcmp(x->rel, y->rel);
}

/* In place, two names of one file (a symlink and its target, or hard
 * links) would each rename a signed copy over it, and the last would
 * drop the other's signature: the second is reported, naming the first. */
static int note_same_files(tree_job *t, rs_error *err)
{
    _cleanup_free_ entry **by_file = calloc(t->count ? t->count : 1, sizeof(*by_file));
    size_t n = 0;

    if (!by_file)
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < t->count; i++)
        if (!t->entries[i].problem && !t->entries[i].carried)
            by_file[n++] = &t->entries[i];
    qsort(by_file, n, sizeof(*by_file), cmp_file);
    for (size_t i = 1; i < n; i++) {
        entry *a = by_file[i - 1], *b = by_file[i];

        if (a->checked.dev != b->checked.dev || a->checked.ino != b->checked.ino)
            continue;
        if (asprintf(&b->problem, "%s/%s: the same file as %s/%s; in place, only one signature can be attached to it",
                     t->o->root, b->rel, t->o->root, a->rel) < 0) {
            b->problem = NULL;
            return rs_fail(err, "out of memory");
        }
    }
    return 0;
}

static void job_free(tree_job *t)
{
    for (size_t i = 0; i < t->count; i++) {
        free(t->entries[i].write_path);
        free(t->entries[i].problem);
        rs_output_abort(&t->entries[i].out);
    }
    free(t->entries);
    rs_strpool_free(&t->names);
}

static int take_problems(tree_job *t, rs_attach_tree_report *r, rs_error *err)
{
    for (size_t i = 0; i < t->count; i++)
        if (t->entries[i].problem)
            r->n_problems++;
    if (!r->n_problems)
        return 0;
    r->problems = calloc(r->n_problems, sizeof(char *));
    if (!r->problems)
        return rs_fail(err, "out of memory");
    for (size_t i = 0, k = 0; i < t->count; i++)
        if (t->entries[i].problem)
            r->problems[k++] = TAKE_PTR(t->entries[i].problem);
    return rs_fail(err, "%s: %zu of %zu signatures do not fit their files; nothing was written", t->o->signatures,
                   r->n_problems, t->count);
}

int rs_attach_tree(const rs_attach_tree_options *o, rs_attach_tree_report *report, rs_error *err)
{
    tree_job t = { .o = o, .root_fd = -1 };
    int rc;

    memset(report, 0, sizeof(*report));
    if ((t.root_fd = open(o->root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        return rs_fail(err, "%s: %s", o->root, strerror(errno));
    t.in_place = writes_in_place(&t);
    rc = rs_walk_tree(o->signatures, &(rs_walk_opts){ .skip_hidden = true }, collect, &t, err);
    if (rc == 0 && t.count == 0)
        rc = rs_fail(err, "%s: no .sig files", o->signatures);
    report->n_files = t.count;
    rs_progress_total(o->progress, t.count);
    if (rc == 0) {
        rc = rs_batch_run(t.count, o->jobs, check_one, &t, err);
        report->needs_cert = t.needs_cert;
    }
    if (rc == 0 && t.in_place)
        rc = note_same_files(&t, err);
    if (rc == 0)
        rc = take_problems(&t, report, err);
    if (rc == 0 && o->checked)
        o->checked(o->checked_ctx);
    if (rc == 0)
        rc = rs_batch_run(t.count, o->jobs, write_one, &t, err);
    /* Everything is written; one sync, and only renames remain. */
    if (rc == 0)
        rc = rs_sync_filesystem(o->output ? o->output : o->root, err);
    for (size_t i = 0; rc == 0 && i < t.count; i++)
        if (t.entries[i].out.tmp_path)   /* none for a file that already carried its signature */
            rc = rs_output_commit(&t.entries[i].out, err);
    job_free(&t);
    close(t.root_fd);
    return rc;
}

void rs_attach_tree_report_free(rs_attach_tree_report *r)
{
    for (size_t i = 0; i < r->n_problems; i++)
        free(r->problems[i]);
    free(r->problems);
    memset(r, 0, sizeof(*r));
}

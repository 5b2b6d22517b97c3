/* attach-tree, one file at a time: its signature checked against it, then
 * the file written with it into a temporary kept for the commit. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "crypto/ossl.h"
#include "formats/format.h"
#include "pipeline/attach_tree_internal.h"

#define MAX_SIG (1024 * 1024)

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

char *rs_attach_write_path(const tree_job *t, const entry *e)
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

/* In place, whether the tree may hold another name of this file
 * (attach_tree_same.c): more than one link, or reached through a symlink
 * (its real path is not the root's joined with its own), or through a
 * mount other than the root's. When in doubt, it may. */
static bool may_have_second_name(const tree_job *t, const entry *e, int fd, const struct stat *st)
{
    size_t n = strcmp(t->real_root, "/") ? strlen(t->real_root) : 0;

    if (st->st_nlink > 1 || !t->root_mount)
        return true;
    if (strncmp(e->write_path, t->real_root, n) || e->write_path[n] != '/' || strcmp(e->write_path + n + 1, e->rel))
        return true;
    return rs_attach_mount_id(fd) != t->root_mount;
}

uint64_t rs_attach_mount_id(int fd)
{
    struct statx sx;

    if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID))
        return 0;
    return sx.stx_mnt_id;
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

int rs_attach_check_one(void *ctx, size_t i, rs_error *err)
{
    tree_job *t = ctx;
    entry *e = &t->win[i];
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
    rs_sha256(sig.data, sig.len, e->k.sig_sha256);
    if (open_target(t, e, path, &img, &why) < 0)
        return note_problem(e, path, &why);
    if (fstat(img.in.fd, &st) < 0) {
        rs_fail(&why, "%s", strerror(errno));
        return note_problem(e, path, &why);
    }
    e->k.checked = file_id_of(&st);
    if (t->in_place && rs_replace_path(path, img.in.fd, &e->write_path, &why) < 0)
        return note_problem(e, path, &why);
    e->k.maybe_shared = t->in_place && may_have_second_name(t, e, img.in.fd, &st);
    /* Said once for the whole tree, not once per module. */
    if (img.format->binding_needs_cert && !t->o->cert) {
        t->needs_cert = true;
        return rs_fail(err, "%s signatures carry no certificate: --cert is needed to check them",
                       img.format->name);
    }
    if (carries(&img, &sig, &e->k.carried, &why) < 0)
        return note_problem(e, path, &why);
    max = img.format->max_signatures;
    if (!e->k.carried && max && img.format->count(&img) >= max) {
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
    if (memcmp(now, e->k.sig_sha256, sizeof(now)))
        return rs_fail(err, "%s: changed since it was checked; nothing was written", path);
    return 0;
}

/* Directories made for a file under OUTROOT are noted in its entry, so
 * that a failure removes them with the temporaries (attach_tree.c). */
static int make_parents(entry *e, const char *out, rs_error *err)
{
    size_t made;
    int rc = rs_mkdir_parents_made(out, &made, err);

    e->k.made_dir_len = (uint32_t)made;
    return rc;
}

int rs_attach_write_one(void *ctx, size_t i, rs_error *err)
{
    tree_job *t = ctx;
    entry *e = &t->win[i];
    _cleanup_free_ char *in = target_path(t, e), *out = NULL;
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    _cleanup_output_ rs_output written = { .fd = -1 };
    _cleanup_bytes_ rs_bytes sig = { 0 };
    rs_edit edit = { .remove_index = -1, .append = &sig, .n_append = e->k.carried ? 0 : 1 };
    struct stat st;
    file_id now;

    if (e->k.carried && t->in_place) {
        rs_progress_signed(t->o->progress);
        return 0;
    }
    if (!in || !(out = rs_attach_write_path(t, e)))
        return rs_fail(err, "out of memory");
    if (!e->k.carried && read_checked_sig(t, e, &sig, err) < 0)
        return -1;
    if (open_target(t, e, in, &img, err) < 0)
        return -1;
    if (fstat(img.in.fd, &st) < 0 || (now = file_id_of(&st), !same_file(&e->k.checked, &now)))
        return rs_fail(err, "%s: changed since its signature was checked; nothing was written", in);
    if (make_parents(e, out, err) < 0 || rs_output_open(&written, out, img.in.mode, err) < 0)
        return -1;
    if (img.format->write(&img, &edit, &written, err) < 0 || rs_output_keep(&written, &e->k.out, err) < 0)
        return rs_error_prefix(err, "%s", out);
    rs_progress_signed(t->o->progress);
    return 0;
}

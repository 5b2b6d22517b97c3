/* Phase B of sign-template: every digest signed, in tarball order, on
 * the worker threads; each signature, once made, written below
 * signatures/, into signatures.tar.gz and into the manifest by the
 * tarball's thread, in order. */
#include <stdio.h>
#include <stdlib.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "crypto/ossl.h"
#include "pipeline/sign_job.h"

static int write_sig(const char *base, const char *sig_name, const rs_sign_item *it, rs_error *err)
{
    _cleanup_free_ char *path = NULL;

    if (!(path = rs_path_join(base, sig_name)))
        return rs_fail(err, "out of memory");
    return rs_write_new_file(path, it->sig.data, it->sig.len, 0644, err);
}

/* The image again, for a signer that must read it (a module through the
 * service); -1 when the signer needs none, or when its package source
 * is read only as a stream (the signer then says why it cannot do
 * without). */
static int reopen_for_signer(const rs_sign_job *j, const rs_sign_item *it, int *fd, rs_error *err)
{
    *fd = -1;
    if (!rs_image_signer_wants_image(j->o->signers[it->file->type], it->format))
        return 0;
    return rs_pkgtree_open(it->tree, it->resolved, fd, err);
}

/* Item k (in tarball order) is signed: the one place each file's
 * completion is marked. */
static void item_signed(rs_sign_job *j, size_t k)
{
    rs_tarball_feed_ready(j->feed, k);
    rs_progress_signed(j->o->progress);
}

static int sign_item(rs_sign_job *j, rs_sign_item *it, rs_error *err)
{
    _cleanup_free_ char *name = NULL;
    _cleanup_close_ int image_fd = -1;
    rs_digest digest;

    if (!(name = rs_path_join(it->pkg->name, it->file->path)))
        return rs_fail(err, "out of memory");
    rs_sign_item_digest(j, it, &digest);
    if (reopen_for_signer(j, it, &image_fd, err) < 0 ||
        rs_image_signer_sign(j->o->signers[it->file->type], it->format, &digest, &j->o->sign, name, image_fd,
                             &it->sig, err) < 0)
        return rs_error_prefix(err, "package %s: %s", it->pkg->name, it->file->path);
    rs_sha256(it->sig.data, it->sig.len, it->sig_sha256);
    return 0;
}

/* Item k in tarball order, so the tarball's writer rarely waits. One that
 * fails is abandoned: the writer can never pass it. */
static int sign_one(void *ctx, size_t k, rs_error *err)
{
    rs_sign_job *j = ctx;

    if (rs_tarball_feed_room(j->feed, k, err) < 0)
        return -1;
    if (sign_item(j, j->by_name[k], err) < 0) {
        rs_tarball_feed_abandon(j->feed, k);
        return -1;
    }
    item_signed(j, k);
    return 0;
}

/* One thread writes every signature file, in order: two workers creating
 * files side by side in one directory wait on its lock, and the workers
 * are left with nothing but the signing. */
static int tar_entry(void *ctx, size_t k, const char **path, const void **data, size_t *len, rs_error *err)
{
    rs_sign_job *j = ctx;
    const rs_sign_item *it = j->by_name[k];

    /* The writer asks for entry k once k-1 is in the tarball and on disk
     * in signatures/, so memory stays flat in the number of files. Files
     * 0..k are signed: their manifest entries follow. */
    if (k > 0)
        rs_bytes_free(&j->by_name[k - 1]->sig);
    free(j->tar_name);
    if (!(j->tar_name = rs_sign_item_sig_name(it)))
        return rs_fail(err, "out of memory");
    if (write_sig(j->sigdir, j->tar_name, it, err) < 0 || rs_sign_manifest_advance(j, k + 1, err) < 0)
        return -1;

    *path = j->tar_name;   /* until the next entry: the tarball copies what it keeps */
    *data = it->sig.data;
    *len = it->sig.len;
    return 0;
}

/* signatures.tar.gz is written from memory while signing goes on, rather
 * than read back from the tree and compressed after it. Its writer starts
 * before phase A, so loading libarchive happens meanwhile too. */
int rs_sign_start_tarball(rs_sign_job *j, rs_error *err)
{
    _cleanup_free_ char *tarball = NULL;

    if (asprintf(&tarball, "%s/" RS_SIGNATURES_TARBALL, j->work) < 0)
        return rs_fail(err, "out of memory");
    return rs_tarball_feed_start(&j->feed, tarball, j->mtime, j->n_items, tar_entry, j, err);
}

int rs_sign_all(rs_sign_job *j, rs_error *err)
{
    for (size_t i = 0; i < j->n_items; i++)
        if (!j->o->signers[j->items[i].file->type])
            return rs_fail(err, "package %s: %s: no key is given for sig_type %s", j->items[i].pkg->name,
                           j->items[i].file->path, rs_sig_type_name(j->items[i].file->type));

    return rs_batch_run(j->n_items, j->o->jobs, sign_one, j, err);
}

int rs_sign_finish_tarball(rs_sign_job *j, rs_error *err)
{
    return rs_tarball_feed_finish(j->feed, err);
}

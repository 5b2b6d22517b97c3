/* Phase B of sign-template: every digest signed, in tarball order, on
 * the worker threads, each item read back from the store into a slot;
 * each signature, once made, written below signatures/, into
 * signatures.tar.gz and into the manifest by the tarball's thread, in
 * order. */
#include <stdio.h>
#include <stdlib.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "crypto/ossl.h"
#include "pipeline/sign_job.h"

/* The items being signed, each in the slot of its place modulo the
 * slots' number. The writer is never more than RS_TARBALL_FEED_AHEAD
 * places behind a signer, so twice that many slots are never wanted by
 * two items at once: the one a signer fills was written long before.
 * Slots are filled a block of places at a time, by the first signer to
 * want one of them: files.json mostly lists files near the order they
 * sort in, so a block's records and paths are read in a few reads. A
 * block reaches at most SLOT_BLOCK places past one with room, well
 * within the margin. */
#define RS_SIGN_SLOTS (2 * RS_TARBALL_FEED_AHEAD)
#define SLOT_BLOCK 64

struct rs_sign_slot {
    rs_sign_item it;
    rs_bytes names;
};

struct rs_sign_slots {
    rs_sign_slot *slot;
    size_t n;                  /* a whole number of blocks */
    size_t *block_of;          /* the block each group of slots holds, or SIZE_MAX */
    rs_sign_record recs[SLOT_BLOCK];
    rs_bytes paths;
};

static rs_sign_slot *slot_of(rs_sign_job *j, size_t k)
{
    return &j->slots->slot[k % j->slots->n];
}

void rs_sign_slots_free(rs_sign_job *j)
{
    rs_sign_slots *s = j->slots;

    if (!s)
        return;
    for (size_t i = 0; s->slot && i < s->n; i++) {
        rs_bytes_free(&s->slot[i].it.sig);
        rs_bytes_free(&s->slot[i].names);
    }
    free(s->slot);
    free(s->block_of);
    rs_bytes_free(&s->paths);
    free(s);
    j->slots = NULL;
}

static int slots_make(rs_sign_job *j, rs_error *err)
{
    size_t blocks = (j->n_items + SLOT_BLOCK - 1) / SLOT_BLOCK;
    rs_sign_slots *s = calloc(1, sizeof(*s));

    if (!s)
        return rs_fail(err, "out of memory");
    j->slots = s;
    if (blocks > RS_SIGN_SLOTS / SLOT_BLOCK)
        blocks = RS_SIGN_SLOTS / SLOT_BLOCK;
    s->n = blocks * SLOT_BLOCK;
    if (!(s->slot = calloc(s->n, sizeof(*s->slot))) || !(s->block_of = calloc(blocks, sizeof(size_t))))
        return rs_fail(err, "out of memory");
    for (size_t g = 0; g < blocks; g++)
        s->block_of[g] = SIZE_MAX;
    return 0;
}

/* Places first..first+n-1, whose items are indices[0..n-1], the indices
 * consecutive: their records and paths read at once, into their slots. */
static int load_run(rs_sign_job *j, size_t first, const uint64_t *indices, size_t n, rs_error *err)
{
    rs_sign_slots *s = j->slots;

    if (rs_sign_store_read_batch(j, (size_t)indices[0], n, s->recs, &s->paths, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        rs_sign_slot *slot = slot_of(j, first + i);

        rs_bytes_free(&slot->it.sig);
        if (rs_sign_store_item_at(j, (size_t)indices[i], &s->recs[i], rs_sign_batch_path(s->recs, &s->paths, i),
                                  &slot->it, &slot->names, err) < 0)
            return -1;
        slot->it.format = rs_sign_checked_format(&slot->it.rec);
    }
    return 0;
}

static int load_block(rs_sign_job *j, size_t b, rs_error *err)
{
    size_t first = b * SLOT_BLOCK, n = j->n_items - first < SLOT_BLOCK ? j->n_items - first : SLOT_BLOCK;
    uint64_t indices[SLOT_BLOCK];

    if (rs_sign_order_read(j, first, n, indices, err) < 0)
        return -1;
    for (size_t i = 0, run; i < n; i += run) {
        for (run = 1; i + run < n && indices[i + run] == indices[i] + run; run++)
            ;
        if (load_run(j, first + i, indices + i, run, err) < 0)
            return -1;
    }
    return 0;
}

/* Place k's block in its slots, loaded by whichever signer wants it first. */
static int slot_ready(rs_sign_job *j, size_t k, rs_error *err)
{
    rs_sign_slots *s = j->slots;
    size_t b = k / SLOT_BLOCK, g = b % (s->n / SLOT_BLOCK);
    int rc = 0;

    pthread_mutex_lock(&j->store_lock);
    if (s->block_of[g] != b) {
        s->block_of[g] = SIZE_MAX;
        if ((rc = load_block(j, b, err)) == 0)
            s->block_of[g] = b;
    }
    pthread_mutex_unlock(&j->store_lock);
    return rc;
}

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
    if (!rs_image_signer_wants_image(j->o->signers[it->rec.type], it->format))
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

    if (!(name = rs_path_join(it->pkg->name, it->path)))
        return rs_fail(err, "out of memory");
    rs_sign_item_digest(j, it, &digest);
    if (reopen_for_signer(j, it, &image_fd, err) < 0 ||
        rs_image_signer_sign(j->o->signers[it->rec.type], it->format, &digest, &j->o->sign, name, image_fd, &it->sig,
                             err) < 0)
        return rs_error_prefix(err, "package %s: %s", it->pkg->name, it->path);
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
    if (slot_ready(j, k, err) < 0 || sign_item(j, &slot_of(j, k)->it, err) < 0) {
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
    rs_sign_item *it = &slot_of(j, k)->it;

    /* The writer asks for entry k once k-1 is in the tarball and on disk
     * in signatures/, so memory stays flat in the number of files. Files
     * 0..k are signed: their manifest entries follow, read from the
     * store, with each one's signature hash kept first. */
    if (k > 0)
        rs_bytes_free(&slot_of(j, k - 1)->it.sig);
    free(j->tar_name);
    if (!(j->tar_name = rs_sign_item_sig_name(it)))
        return rs_fail(err, "out of memory");
    if (write_sig(j->sigdir, j->tar_name, it, err) < 0 || rs_sign_store_keep_hash(j, k, it->sig_sha256, err) < 0 ||
        rs_sign_manifest_advance(j, k + 1, err) < 0)
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

    if (slots_make(j, err) < 0)
        return -1;
    if (asprintf(&tarball, "%s/" RS_SIGNATURES_TARBALL, j->work) < 0)
        return rs_fail(err, "out of memory");
    return rs_tarball_feed_start(&j->feed, tarball, j->mtime, j->n_items, tar_entry, j, err);
}

/* Every sig_type listed has a key: else the first file of one without
 * is named. */
static int check_keys(rs_sign_job *j, rs_error *err)
{
    _cleanup_bytes_ rs_bytes names = { 0 };
    rs_sign_item it = { 0 };
    size_t first = j->n_items;

    for (size_t t = 0; t < RS_SIG_TYPES; t++)
        if (!j->o->signers[t] && j->first_of_type[t] < first)
            first = j->first_of_type[t];
    if (first == j->n_items)
        return 0;
    if (rs_sign_store_load_item(j, first, &it, &names, err) < 0)
        return -1;
    return rs_fail(err, "package %s: %s: no key is given for sig_type %s", it.pkg->name, it.path,
                   rs_sig_type_name((rs_sig_type)it.rec.type));
}

int rs_sign_all(rs_sign_job *j, rs_error *err)
{
    if (check_keys(j, err) < 0)
        return -1;
    return rs_batch_run(j->n_items, j->o->jobs, sign_one, j, err);
}

int rs_sign_finish_tarball(rs_sign_job *j, rs_error *err)
{
    return rs_tarball_feed_finish(j->feed, err);
}

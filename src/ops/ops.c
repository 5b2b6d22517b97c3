#include "ops/ops.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "archive/decompress.h"
#include "base/cleanup.h"

#define MAX_DETACHED_SIG (1024 * 1024)

int rs_source_date_epoch(time_t *t, bool *set, rs_error *err)
{
    const char *env = getenv("SOURCE_DATE_EPOCH");
    char *end;
    long long v;

    *set = false;
    if (!env || !*env)
        return 0;
    errno = 0;
    v = strtoll(env, &end, 10);
    if (errno || *end || v < 0 || v > 253402300799LL)
        return rs_fail(err, "SOURCE_DATE_EPOCH: '%s' is not a valid Unix time", env);
    *t = (time_t)v;
    *set = true;
    return 0;
}

int rs_sign_options_init(rs_sign_options *opts, const char *hash, bool signing_time, rs_error *err)
{
    bool from_env;

    memset(opts, 0, sizeof(*opts));
    if (rs_md_by_name(hash ? hash : "sha256", &opts->md, err) < 0)
        return -1;
    opts->signing_time = signing_time;
    if (rs_source_date_epoch(&opts->time, &from_env, err) < 0)
        return -1;
    if (!from_env)
        opts->time = time(NULL);
    return 0;
}

static int write_image(rs_image *img, const rs_edit *edit, const char *output, rs_error *err)
{
    _cleanup_output_ rs_output out = { .fd = -1 };
    _cleanup_free_ char *real = NULL;
    const char *name = output ? output : img->in.path;

    /* In place through a symlink, the file it leads to is replaced. */
    if ((!output && rs_replace_path(img->in.path, img->in.fd, &real, err) < 0) ||
        rs_output_open(&out, output ? output : real, img->in.mode, err) < 0 ||
        img->format->write(img, edit, &out, err) < 0 || rs_output_commit(&out, err) < 0)
        return rs_error_prefix(err, "%s", name);
    return 0;
}

static int check_capacity(const rs_image *img, rs_error *err)
{
    size_t max = img->format->max_signatures;

    if (max && img->format->count((rs_image *)img) >= max)
        return rs_fail(err, "%s: already carries %zu signature(s), the most a %s file can hold (sign with "
                            "--replace, or strip it first)", img->in.path, max, img->format->name);
    return 0;
}

/* Hands a finished signature on: written alone, or attached to the image. */
static int emit(rs_image *img, const rs_bytes *sig, bool detached, const char *output, rs_error *err)
{
    rs_edit edit = { .remove_index = -1, .append = sig, .n_append = 1 };

    if (!detached)
        return write_image(img, &edit, output, err);
    if (rs_write_file(output, sig->data, sig->len, 0644, err) < 0)
        return rs_error_prefix(err, "%s", output);
    return 0;
}

int rs_op_sign(const char *path, rs_image_signer *signer, const rs_sign_options *opts, const rs_sign_target *t,
               rs_sign_report *report, rs_error *err)
{
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    _cleanup_bytes_ rs_bytes sig = { 0 };
    rs_edit edit = { .remove_all = t->replace, .remove_index = -1, .append = &sig, .n_append = 1 };
    rs_digest d;

    if (rs_image_open(&img, path, err) < 0)
        return -1;
    *report = (rs_sign_report){ .existing = img.format->count(&img), .format = img.format };
    if (!t->detached && !t->replace && check_capacity(&img, err) < 0)
        return -1;
    if (img.format->digest(&img, opts->md, &d, err) < 0 ||
        rs_image_signer_sign(signer, img.format, &d, opts, path, img.in.fd, &sig, err) < 0)
        return rs_error_prefix(err, "%s", path);
    if (t->detached)
        return emit(&img, &sig, true, t->output, err);
    return write_image(&img, &edit, t->output, err);
}

int rs_op_emit(const char *path, const rs_bytes *sig, const char *sig_path, X509 *cert, bool detached,
               const char *output, rs_error *err)
{
    _cleanup_image_ rs_image img = { .in.fd = -1 };

    if (rs_image_open(&img, path, err) < 0)
        return -1;
    if (!detached && check_capacity(&img, err) < 0)
        return -1;
    /* A signature read from a file may be what is wrong: both are named. */
    if (img.format->check_binding(&img, sig, cert, err) < 0) {
        if (sig_path)
            return rs_error_prefix(err, "%s: attaching to %s", sig_path, path);
        return rs_error_prefix(err, "%s", path);
    }
    return emit(&img, sig, detached, output, err);
}

int rs_op_attach(const char *sig_path, const char *path, X509 *cert, const char *output, rs_error *err)
{
    _cleanup_bytes_ rs_bytes sig = { 0 };

    if (rs_read_file(sig_path, MAX_DETACHED_SIG, &sig, err) < 0)
        return rs_error_prefix(err, "%s", sig_path);
    return rs_op_emit(path, &sig, sig_path, cert, false, output, err);
}

int rs_op_detach(const char *path, size_t index, const char *output, rs_error *err)
{
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    _cleanup_bytes_ rs_bytes sig = { 0 };

    if (rs_image_open(&img, path, err) < 0)
        return -1;
    if (img.format->count(&img) == 0)
        return rs_fail(err, "%s: not signed", path);
    if (img.format->extract(&img, index, &sig, err) < 0)
        return rs_error_prefix(err, "%s", path);
    if (!output) {
        if (isatty(STDOUT_FILENO))
            return rs_fail(err, "%s: the signature is binary DER: give --output, or redirect standard output", path);
        return rs_write_all(STDOUT_FILENO, sig.data, sig.len) == 0 ? 0
                                                                   : rs_fail(err, "standard output: %s", strerror(errno));
    }
    if (rs_write_file(output, sig.data, sig.len, 0644, err) < 0)
        return rs_error_prefix(err, "%s", output);
    return 0;
}

int rs_op_strip(const char *path, long index, const char *output, rs_error *err)
{
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    rs_edit edit = { .remove_all = index < 0, .remove_index = index };

    if (rs_image_open(&img, path, err) < 0)
        return -1;
    if (img.format->count(&img) == 0)
        return rs_fail(err, "%s: not signed", path);
    if (index >= 0 && (size_t)index >= img.format->count(&img))
        return rs_fail(err, "%s: no signature #%ld (it has %zu)", path, index, img.format->count(&img));
    return write_image(&img, &edit, output, err);
}

void rs_listing_free(rs_listing *l)
{
    for (size_t i = 0; i < l->count; i++)
        rs_sig_info_free(&l->sigs[i]);
    free(l->sigs);
    memset(l, 0, sizeof(*l));
}

/* What is only read is read as Linux reads it: a compressed module
 * (name.ko.xz, as trixie ships them) decompressed. Signing one stays
 * refused, as sign-file refuses it: modules are signed, then compressed. */
static int open_to_read(rs_image *img, const char *path, rs_error *err)
{
    uint64_t size;
    int fd;

    if (!rs_is_compressed_module_name(path))
        return rs_image_open(img, path, err);
    if (rs_decompress_to_memfd(path, RS_MAX_DECOMPRESSED, &fd, &size, err) < 0)
        return -1;
    return rs_image_open_fd(img, fd, path, err);
}

/* Opens path and allocates one zeroed slot of `size` bytes per signature. */
static int open_with_slots(rs_image *img, const char *path, size_t size, void **slots, size_t *n, rs_error *err)
{
    if (open_to_read(img, path, err) < 0)
        return -1;
    *n = img->format->count(img);
    *slots = calloc(*n ? *n : 1, size);
    return *slots ? 0 : rs_fail(err, "out of memory");
}

int rs_op_list(const char *path, rs_listing *out, rs_error *err)
{
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    size_t n;

    memset(out, 0, sizeof(*out));
    if (open_with_slots(&img, path, sizeof(*out->sigs), (void **)&out->sigs, &n, err) < 0)
        return -1;
    out->format = img.format->name;
    for (size_t i = 0; i < n; i++) {
        _cleanup_bytes_ rs_bytes der = { 0 };

        if (img.format->extract(&img, i, &der, err) < 0 || img.format->describe(&der, &out->sigs[i], err) < 0) {
            rs_listing_free(out);
            return rs_error_prefix(err, "%s: signature #%zu", path, i);
        }
        out->count++;
    }
    return 0;
}

void rs_verification_free(rs_verification *v)
{
    for (size_t i = 0; i < v->count; i++)
        rs_verify_report_free(&v->reports[i]);
    free(v->reports);
    memset(v, 0, sizeof(*v));
}

int rs_op_verify(const char *path, const rs_trust *trust, rs_verification *out, rs_error *err)
{
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    size_t n;

    memset(out, 0, sizeof(*out));
    if (open_with_slots(&img, path, sizeof(*out->reports), (void **)&out->reports, &n, err) < 0)
        return -1;
    out->format = img.format->name;
    for (size_t i = 0; i < n; i++) {
        _cleanup_bytes_ rs_bytes der = { 0 };
        rs_verify_report *r = &out->reports[i];
        rs_error why;

        out->count++;
        if (img.format->extract(&img, i, &der, &why) < 0 || img.format->verify(&img, &der, trust, r, &why) < 0) {
            r->ok = false;
            snprintf(r->reason, sizeof(r->reason), "%s", why.msg);
        }
        out->ok |= r->ok;
    }
    return 0;
}

int rs_op_digest(const char *path, const EVP_MD *md, rs_digest *out, rs_error *err)
{
    _cleanup_image_ rs_image img = { .in.fd = -1 };

    if (rs_image_open(&img, path, err) < 0)
        return -1;
    if (img.format->digest(&img, md, out, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

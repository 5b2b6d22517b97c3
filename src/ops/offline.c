/* Offline requests through the format's two signing phases: prepare runs
 * to_be_signed, finish runs assemble, and in between only the digest of
 * the bytes to be signed travels. */
#include "ops/offline.h"

#include <stdlib.h>
#include <string.h>

#include "crypto/ossl.h"

void rs_offline_request_free(rs_offline_request *r)
{
    free(r->file);
    X509_free(r->cert);
    if (r->chain)
        sk_X509_pop_free(r->chain, X509_free);
    rs_bytes_free(&r->to_be_signed);
    memset(r, 0, sizeof(*r));
}

static STACK_OF(X509) *copy_chain(STACK_OF(X509) *chain)
{
    STACK_OF(X509) *copy = sk_X509_new_null();

    if (copy && !X509_add_certs(copy, chain, X509_ADD_FLAG_UP_REF)) {
        sk_X509_pop_free(copy, X509_free);
        return NULL;
    }
    return copy;
}

int rs_offline_prepare_digest(const rs_format *format, const rs_digest *image_digest, X509 *cert,
                              STACK_OF(X509) *chain, const rs_sign_options *opts, rs_offline_request *out,
                              rs_error *err)
{
    memset(out, 0, sizeof(*out));
    if (format->to_be_signed(image_digest, cert, opts, &out->to_be_signed, err) < 0 ||
        rs_tbs_digest(format, &out->to_be_signed, image_digest->md, &out->tbs, err) < 0) {
        rs_offline_request_free(out);
        return -1;
    }
    out->format = format;
    out->image_digest = *image_digest;
    out->opts = *opts;
    out->chain = copy_chain(chain);
    if (!out->chain || !X509_up_ref(cert)) {
        rs_offline_request_free(out);
        return rs_fail(err, "out of memory");
    }
    out->cert = cert;
    return 0;
}

int rs_offline_prepare(const char *path, X509 *cert, STACK_OF(X509) *chain, const rs_sign_options *opts,
                       rs_offline_request *out, rs_error *err)
{
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    rs_digest d;

    if (rs_image_open(&img, path, err) < 0)
        return -1;
    if (img.format->digest(&img, opts->md, &d, err) < 0)
        return rs_error_prefix(err, "%s", path);
    if (rs_offline_prepare_digest(img.format, &d, cert, chain, opts, out, err) < 0)
        return rs_error_prefix(err, "%s", path);
    out->file = strdup(path);
    if (!out->file) {
        rs_offline_request_free(out);
        return rs_fail(err, "out of memory");
    }
    return 0;
}

int rs_offline_sign(const rs_offline_request *r, rs_signer *signer, rs_bytes *sig, rs_error *err)
{
    if (X509_cmp(signer->cert, r->cert) != 0)
        return rs_fail(err, "the key's certificate is not the one the request was prepared for");
    return rs_signer_sign_digest(signer, r->tbs.md, r->tbs.bytes, r->tbs.len, sig, err);
}

int rs_offline_check_value(const rs_offline_request *r, const rs_bytes *sig, rs_error *err)
{
    if (rs_verify_digest(X509_get0_pubkey(r->cert), r->tbs.md, r->tbs.bytes, r->tbs.len, sig->data, sig->len, err) < 0)
        return rs_fail(err, "the signature value does not verify with the request's certificate");
    return 0;
}

int rs_offline_finish(const rs_offline_request *r, const rs_bytes *sig, rs_bytes *der, rs_error *err)
{
    if (rs_offline_check_value(r, sig, err) < 0)
        return -1;
    return r->format->assemble(&r->image_digest, &r->to_be_signed, sig, r->cert, r->chain, &r->opts, der, err);
}

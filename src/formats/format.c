#include "formats/format.h"

#include <stdlib.h>
#include <string.h>

static const rs_format *const formats[] = {
    &rs_format_pe,
    &rs_format_module,
};

const rs_format *rs_format_named(const char *name)
{
    for (size_t i = 0; name && i < sizeof(formats) / sizeof(formats[0]); i++)
        if (!strcmp(formats[i]->name, name))
            return formats[i];
    return NULL;
}

const rs_format *rs_format_for_sig_type(const char *sig_type)
{
    for (size_t i = 0; sig_type && i < sizeof(formats) / sizeof(formats[0]); i++)
        if (!strcmp(formats[i]->sig_type, sig_type))
            return formats[i];
    return NULL;
}

void rs_sig_info_free(rs_sig_info *info)
{
    free(info->subject);
    free(info->issuer);
    free(info->serial);
    free(info->key_id);
    memset(info, 0, sizeof(*info));
}

void rs_verify_report_free(rs_verify_report *r)
{
    free(r->anchor);
    free(r->signer);
    memset(r, 0, sizeof(*r));
}

/* Opens the image as the first of n formats whose probe takes it. */
static int detect_among(rs_image *img, const rs_format *const *among, size_t n, const char *path, rs_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!among[i]->probe(&img->in))
            continue;
        img->format = among[i];
        if (among[i]->open(img, err) < 0) {
            img->format = NULL;
            rs_input_close(&img->in);
            return rs_error_prefix(err, "%s", path);
        }
        return 0;
    }
    rs_input_close(&img->in);
    if (n == 1)
        return rs_fail(err, "%s: not a %s", path, among[0]->name);
    return rs_fail(err, "%s: unrecognised format (not a PE/COFF image or an ELF kernel module)", path);
}

static int detect(rs_image *img, const char *path, rs_error *err)
{
    return detect_among(img, formats, sizeof(formats) / sizeof(formats[0]), path, err);
}

int rs_image_open(rs_image *img, const char *path, rs_error *err)
{
    memset(img, 0, sizeof(*img));
    img->in.fd = -1;
    if (rs_input_open(&img->in, path, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return detect(img, path, err);
}

int rs_image_open_fd(rs_image *img, int fd, const char *name, rs_error *err)
{
    memset(img, 0, sizeof(*img));
    img->in.fd = -1;
    if (rs_input_from_fd(&img->in, fd, name, err) < 0)
        return rs_error_prefix(err, "%s", name);
    return detect(img, name, err);
}

int rs_image_open_fd_as(rs_image *img, int fd, const rs_format *format, const char *name, rs_error *err)
{
    memset(img, 0, sizeof(*img));
    img->in.fd = -1;
    if (rs_input_from_fd(&img->in, fd, name, err) < 0)
        return rs_error_prefix(err, "%s", name);
    return detect_among(img, &format, 1, name, err);
}

void rs_image_close(rs_image *img)
{
    if (img->format && img->format->close)
        img->format->close(img);
    img->format = NULL;
    img->priv = NULL;
    rs_input_close(&img->in);
}

int rs_tbs_digest(const rs_format *f, const rs_bytes *tbs, const EVP_MD *md, rs_digest *out, rs_error *err)
{
    memset(out, 0, sizeof(*out));
    out->md = md;
    if (!f->key_signs_image_digest)
        return EVP_Digest(tbs->data, tbs->len, out->bytes, &out->len, md, NULL) ? 0
                                                                                : rs_fail_ssl(err, "digest failed");
    if (tbs->len != (size_t)EVP_MD_get_size(md))
        return rs_fail(err, "the bytes to be signed are not a %s digest", rs_md_name(md));
    memcpy(out->bytes, tbs->data, tbs->len);
    out->len = (unsigned)tbs->len;
    return 0;
}

int rs_format_sign_digest(const rs_format *f, const rs_digest *digest, rs_signer *signer, const rs_sign_options *opts,
                          rs_bytes *der, rs_error *err)
{
    _cleanup_bytes_ rs_bytes tbs = { 0 }, sig = { 0 };
    rs_digest to_sign;

    if (f->to_be_signed(digest, signer->cert, opts, &tbs, err) < 0 || rs_tbs_digest(f, &tbs, digest->md, &to_sign, err) < 0 ||
        rs_signer_sign_digest(signer, to_sign.md, to_sign.bytes, to_sign.len, &sig, err) < 0)
        return -1;
    return f->assemble(digest, &tbs, &sig, signer->cert, signer->chain, opts, der, err);
}

int rs_image_sign(rs_image *img, rs_signer *signer, const rs_sign_options *opts, rs_bytes *der, rs_error *err)
{
    rs_digest d;

    if (img->format->digest(img, opts->md, &d, err) < 0)
        return -1;
    return rs_format_sign_digest(img->format, &d, signer, opts, der, err);
}

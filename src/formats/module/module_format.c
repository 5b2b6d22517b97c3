/* Linux kernel modules behind the format interface: an ELF relocatable
 * object, optionally followed by CMS || struct module_signature || magic. */
#include <string.h>

#include "formats/format.h"
#include "formats/module/module_cms.h"
#include "formats/module/module_elf.h"
#include "formats/module/module_trailer.h"

/* Modules are signed before they are compressed; a compressed one must
 * be named as such, not called an unknown format. */
static const struct compression {
    const char *name;
    uint8_t magic[6];
    size_t len;
} compressions[] = {
    { "xz", { 0xfd, '7', 'z', 'X', 'Z', 0 }, 6 },
    { "zstd", { 0x28, 0xb5, 0x2f, 0xfd }, 4 },
    { "gzip", { 0x1f, 0x8b }, 2 },
};

static module_layout *layout(rs_image *img)
{
    return img->priv;
}

static const struct compression *compression_of(const uint8_t *head, size_t n)
{
    for (size_t i = 0; i < sizeof(compressions) / sizeof(compressions[0]); i++)
        if (n >= compressions[i].len && memcmp(head, compressions[i].magic, compressions[i].len) == 0)
            return &compressions[i];
    return NULL;
}

static bool module_probe(const rs_input *in)
{
    uint8_t head[6];
    size_t n = in->size < sizeof(head) ? (size_t)in->size : sizeof(head);

    if (rs_input_read(in, 0, head, n, NULL) < 0)
        return false;
    return module_elf_magic(head, n) || compression_of(head, n);
}

static int refuse_compressed(const rs_input *in, rs_error *err)
{
    uint8_t head[6];
    size_t n = in->size < sizeof(head) ? (size_t)in->size : sizeof(head);
    const struct compression *c;

    if (rs_input_read(in, 0, head, n, err) < 0)
        return -1;
    c = compression_of(head, n);
    if (c)
        return rs_fail(err, "%s-compressed kernel module: decompress it first (modules are signed before compression)",
                       c->name);
    return 0;
}

static int module_open(rs_image *img, rs_error *err)
{
    _cleanup_free_ module_layout *m = calloc(1, sizeof(*m));

    if (!m)
        return rs_fail(err, "out of memory");
    if (refuse_compressed(&img->in, err) < 0 || module_trailer_parse(&img->in, m, err) < 0 ||
        module_elf_check(&img->in, m->content_len, err) < 0)
        return -1;
    img->priv = TAKE_PTR(m);
    return 0;
}

static void module_close(rs_image *img)
{
    free(img->priv);
}

static module_content content_of(rs_image *img)
{
    return (module_content){ .in = &img->in, .len = layout(img)->content_len };
}

static int module_digest(rs_image *img, const EVP_MD *md, rs_digest *out, rs_error *err)
{
    module_content content = content_of(img);

    return module_content_digest(&content, md, out, err);
}

static size_t module_count(rs_image *img)
{
    return layout(img)->is_signed ? 1 : 0;
}

static int module_extract(rs_image *img, size_t index, rs_bytes *der, rs_error *err)
{
    const module_layout *m = layout(img);
    _cleanup_(rs_cmsp) CMS_ContentInfo *cms = NULL;
    _cleanup_bytes_ rs_bytes sig = { 0 };
    uint8_t *buf;

    if (index >= module_count(img))
        return rs_fail(err, "no signature #%zu (the module has %zu)", index, module_count(img));
    buf = malloc(m->sig_len);
    if (!buf)
        return rs_fail(err, "out of memory");
    rs_bytes_adopt(&sig, buf, m->sig_len);
    if (rs_input_read(&img->in, m->content_len, sig.data, sig.len, err) < 0 ||
        module_cms_parse(&sig, &cms, err) < 0)
        return -1;
    *der = sig;
    sig = (rs_bytes){ 0 };
    return 0;
}

/* With no signed attributes the key signs the module digest itself. */
static int module_to_be_signed(const rs_digest *d, X509 *cert, const rs_sign_options *opts, rs_bytes *tbs,
                               rs_error *err)
{
    if (opts->use_key_id && !X509_get0_subject_key_id(cert))
        return rs_fail(err, "the certificate has no subjectKeyIdentifier to name the key by");
    return rs_bytes_set(tbs, d->bytes, d->len, err);
}

static int module_assemble(const rs_digest *d, const rs_bytes *tbs, const rs_bytes *signature, X509 *cert,
                           STACK_OF(X509) *chain, const rs_sign_options *opts, rs_bytes *der, rs_error *err)
{
    (void)chain;   /* sign-file embeds no certificates, and the kernel reads none */
    if (tbs->len != d->len || memcmp(tbs->data, d->bytes, d->len) != 0)
        return rs_fail(err, "the bytes to be signed are not this module's digest");
    return module_cms_assemble(d, signature, cert, opts->use_key_id, der, err);
}

/* Without the certificate only the form can be checked, as sign-file -s
 * checks nothing at all; with it, the signature itself. */
static int module_check_binding(rs_image *img, const rs_bytes *der, X509 *cert, rs_error *err)
{
    _cleanup_(rs_cmsp) CMS_ContentInfo *cms = NULL;
    module_content content = content_of(img);
    _cleanup_free_ char *subject = NULL;

    if (module_cms_parse(der, &cms, err) < 0)
        return -1;
    if (!cert || module_cms_check(cms, cert, &content, err) == 0)
        return 0;
    subject = rs_x509_name(X509_get_subject_name(cert));
    return rs_error_prefix(err, "signature does not fit this module and %s", subject ? subject : "the certificate");
}

static int module_verify(rs_image *img, const rs_bytes *der, const rs_trust *trust, rs_verify_report *report,
                         rs_error *err)
{
    module_content content = content_of(img);

    return module_cms_verify(der, trust, &content, report, err);
}

static int write_signature(rs_output *out, const rs_bytes *der, rs_error *err)
{
    uint8_t trailer[MODULE_TRAILER_LEN];

    if (der->len > UINT32_MAX)
        return rs_fail(err, "signature too large");
    module_trailer_encode((uint32_t)der->len, trailer);
    if (rs_output_write(out, der->data, der->len, err) < 0)
        return -1;
    return rs_output_write(out, trailer, sizeof(trailer), err);
}

static int module_write(rs_image *img, const rs_edit *edit, rs_output *out, rs_error *err)
{
    const module_layout *m = layout(img);
    bool keep = m->is_signed && !edit->remove_all && edit->remove_index != 0;

    if (edit->remove_index >= 0 && (size_t)edit->remove_index >= module_count(img))
        return rs_fail(err, "no signature #%ld (the module has %zu)", edit->remove_index, module_count(img));
    if ((keep ? 1 : 0) + edit->n_append > 1)
        return rs_fail(err, "a kernel module carries exactly one signature; strip it first");
    if (rs_output_copy(out, &img->in, 0, keep ? img->in.size : m->content_len, err) < 0)
        return -1;
    return edit->n_append ? write_signature(out, &edit->append[0], err) : 0;
}

const rs_format rs_format_module = {
    .name = "module",
    .sig_type = "linux-module",
    .key_signs_image_digest = true,
    .probe = module_probe,
    .open = module_open,
    .close = module_close,
    .digest = module_digest,
    .count = module_count,
    .extract = module_extract,
    .describe = module_cms_describe,
    .to_be_signed = module_to_be_signed,
    .assemble = module_assemble,
    .check_binding = module_check_binding,
    .verify = module_verify,
    .write = module_write,
    .max_signatures = 1,
    .binding_needs_cert = true,
};

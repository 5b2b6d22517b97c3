#include "formats/pe/authenticode.h"

#include <openssl/asn1t.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <stdbool.h>
#include <string.h>

#include "crypto/ossl.h"

#define SPC_INDIRECT_DATA_OID "1.3.6.1.4.1.311.2.1.4"
#define SPC_PE_IMAGE_DATA_OID "1.3.6.1.4.1.311.2.1.15"
/* Any PKCS#7 larger than this is not something firmware would accept. */
#define MAX_SIGNATURE (1024 * 1024)

/* ASN.1 of the Authenticode content (Microsoft's Authenticode PE
 * specification), declared for OpenSSL's encoder. */
typedef struct {
    ASN1_OBJECT *type;
    ASN1_TYPE *value;
} SpcAttributeTypeAndOptionalValue;

DECLARE_ASN1_ITEM(SpcAttributeTypeAndOptionalValue)
ASN1_SEQUENCE(SpcAttributeTypeAndOptionalValue) = {
    ASN1_SIMPLE(SpcAttributeTypeAndOptionalValue, type, ASN1_OBJECT),
    ASN1_OPT(SpcAttributeTypeAndOptionalValue, value, ASN1_ANY),
} ASN1_SEQUENCE_END(SpcAttributeTypeAndOptionalValue)

typedef struct {
    SpcAttributeTypeAndOptionalValue *data;
    X509_SIG *messageDigest;
} SpcIndirectDataContent;

DECLARE_ASN1_FUNCTIONS(SpcIndirectDataContent)
ASN1_SEQUENCE(SpcIndirectDataContent) = {
    ASN1_SIMPLE(SpcIndirectDataContent, data, SpcAttributeTypeAndOptionalValue),
    ASN1_SIMPLE(SpcIndirectDataContent, messageDigest, X509_SIG),
} ASN1_SEQUENCE_END(SpcIndirectDataContent)

IMPLEMENT_ASN1_FUNCTIONS(SpcIndirectDataContent)

typedef struct {
    int type;
    union {
        ASN1_BMPSTRING *unicode;
        ASN1_IA5STRING *ascii;
    } value;
} SpcString;

DECLARE_ASN1_FUNCTIONS(SpcString)
ASN1_CHOICE(SpcString) = {
    ASN1_IMP_OPT(SpcString, value.unicode, ASN1_BMPSTRING, 0),
    ASN1_IMP_OPT(SpcString, value.ascii, ASN1_IA5STRING, 1),
} ASN1_CHOICE_END(SpcString)

typedef struct {
    int type;
    union {
        ASN1_IA5STRING *url;
        ASN1_TYPE *moniker;
        SpcString *file;
    } value;
} SpcLink;

DECLARE_ASN1_FUNCTIONS(SpcLink)
ASN1_CHOICE(SpcLink) = {
    ASN1_IMP_OPT(SpcLink, value.url, ASN1_IA5STRING, 0),
    ASN1_IMP_OPT(SpcLink, value.moniker, ASN1_SEQUENCE, 1),
    ASN1_EXP_OPT(SpcLink, value.file, SpcString, 2),
} ASN1_CHOICE_END(SpcLink)

typedef struct {
    ASN1_BIT_STRING *flags;
    SpcLink *file;
} SpcPeImageData;

DECLARE_ASN1_FUNCTIONS(SpcPeImageData)
ASN1_SEQUENCE(SpcPeImageData) = {
    ASN1_SIMPLE(SpcPeImageData, flags, ASN1_BIT_STRING),
    ASN1_EXP_OPT(SpcPeImageData, file, SpcLink, 0),
} ASN1_SEQUENCE_END(SpcPeImageData)

IMPLEMENT_ASN1_FUNCTIONS(SpcPeImageData)
IMPLEMENT_ASN1_FUNCTIONS(SpcLink)
IMPLEMENT_ASN1_FUNCTIONS(SpcString)

DEFINE_POINTER_CLEANUP(idc_freep, SpcIndirectDataContent, SpcIndirectDataContent_free)
DEFINE_POINTER_CLEANUP(peimage_freep, SpcPeImageData, SpcPeImageData_free)
DEFINE_POINTER_CLEANUP(signer_info_freep, PKCS7_SIGNER_INFO, PKCS7_SIGNER_INFO_free)

/* "<<<Obsolete>>>" in UTF-16BE, the file link every signer writes. */
static const uint8_t obsolete_bmp[] = { 0, '<', 0, '<', 0, '<', 0, 'O', 0, 'b', 0, 's', 0, 'o',
                                        0, 'l', 0, 'e', 0, 't', 0, 'e', 0, '>', 0, '>', 0, '>' };

static ASN1_OBJECT *oid(const char *text)
{
    return OBJ_txt2obj(text, 1);
}

static bool is_oid(const ASN1_OBJECT *o, const char *text)
{
    char buf[64];

    return o && OBJ_obj2txt(buf, sizeof(buf), o, 1) > 0 && strcmp(buf, text) == 0;
}

/* DER of SpcPeImageData { flags: empty, file: [0]{[2]{[0] "<<<Obsolete>>>"}} }. */
static int encode_pe_image_data(rs_bytes *out, rs_error *err)
{
    _cleanup_(peimage_freep) SpcPeImageData *pid = SpcPeImageData_new();
    unsigned char *der = NULL;
    int len;

    if (!pid || !(pid->file = SpcLink_new()) || !(pid->file->value.file = SpcString_new()) ||
        !(pid->file->value.file->value.unicode = ASN1_BMPSTRING_new()))
        return rs_fail(err, "out of memory");
    pid->file->type = 2;
    pid->file->value.file->type = 0;
    if (!ASN1_STRING_set(pid->file->value.file->value.unicode, obsolete_bmp, sizeof(obsolete_bmp)) ||
        !ASN1_BIT_STRING_set(pid->flags, (unsigned char *)"", 0))
        return rs_fail(err, "out of memory");
    len = i2d_SpcPeImageData(pid, &der);
    if (len <= 0)
        return rs_fail_ssl(err, "cannot encode SpcPeImageData");
    rs_bytes_adopt(out, der, (size_t)len);
    return 0;
}

/* DER of the whole SpcIndirectDataContent for an image digest. */
static int encode_indirect_data(const rs_digest *d, rs_bytes *out, rs_error *err)
{
    _cleanup_(idc_freep) SpcIndirectDataContent *idc = SpcIndirectDataContent_new();
    _cleanup_bytes_ rs_bytes pid = { 0 };
    _cleanup_(rs_asn1strp) ASN1_STRING *seq = ASN1_STRING_new();
    unsigned char *der = NULL;
    int len;

    if (!idc || !seq || encode_pe_image_data(&pid, err) < 0)
        return -1;
    if (!ASN1_STRING_set(seq, pid.data, (int)pid.len))
        return rs_fail(err, "out of memory");
    idc->data->type = oid(SPC_PE_IMAGE_DATA_OID);
    idc->data->value = ASN1_TYPE_new();
    if (!idc->data->type || !idc->data->value)
        return rs_fail(err, "out of memory");
    ASN1_TYPE_set(idc->data->value, V_ASN1_SEQUENCE, TAKE_PTR(seq));
    X509_ALGOR *alg;
    ASN1_OCTET_STRING *digest;

    X509_SIG_getm(idc->messageDigest, &alg, &digest);
    if (!X509_ALGOR_set0(alg, OBJ_nid2obj(EVP_MD_get_type(d->md)), V_ASN1_NULL, NULL) ||
        !ASN1_OCTET_STRING_set(digest, d->bytes, (int)d->len))
        return rs_fail(err, "out of memory");
    len = i2d_SpcIndirectDataContent(idc, &der);
    if (len <= 0)
        return rs_fail_ssl(err, "cannot encode SpcIndirectDataContent");
    rs_bytes_adopt(out, der, (size_t)len);
    return 0;
}

/* Authenticode's messageDigest covers the content's value bytes, without
 * the outer SEQUENCE tag and length. */
static int content_value(const uint8_t *der, size_t len, const uint8_t **value, long *vlen)
{
    const unsigned char *p = der;
    int tag, xclass;

    if (len > LONG_MAX || (ASN1_get_object(&p, vlen, &tag, &xclass, (long)len) & 0x80) || tag != V_ASN1_SEQUENCE)
        return -1;
    *value = p;
    return 0;
}

static int hash_content(const EVP_MD *md, const rs_bytes *idc, unsigned char *out, unsigned *outlen, rs_error *err)
{
    const uint8_t *value;
    long vlen;

    if (content_value(idc->data, idc->len, &value, &vlen) < 0)
        return rs_fail(err, "malformed SpcIndirectDataContent");
    if (!EVP_Digest(value, (size_t)vlen, out, outlen, md, NULL))
        return rs_fail_ssl(err, "digest failed");
    return 0;
}

static int set_content(PKCS7 *p7, const rs_bytes *idc, rs_error *err)
{
    _cleanup_(rs_pkcs7p) PKCS7 *inner = PKCS7_new();
    ASN1_STRING *seq = ASN1_STRING_new();

    if (!inner || !seq || !ASN1_STRING_set(seq, idc->data, (int)idc->len)) {
        ASN1_STRING_free(seq);
        return rs_fail(err, "out of memory");
    }
    inner->type = oid(SPC_INDIRECT_DATA_OID);
    inner->d.other = ASN1_TYPE_new();
    if (!inner->type || !inner->d.other) {
        ASN1_STRING_free(seq);
        return rs_fail(err, "out of memory");
    }
    ASN1_TYPE_set(inner->d.other, V_ASN1_SEQUENCE, seq);
    if (!PKCS7_set_content(p7, inner))
        return rs_fail_ssl(err, "cannot set PKCS#7 content");
    inner = NULL;
    return 0;
}

static int add_signed_attributes(PKCS7_SIGNER_INFO *si, const rs_sign_options *opts, const unsigned char *md,
                                 unsigned mdlen, rs_error *err)
{
    ASN1_OBJECT *type = oid(SPC_INDIRECT_DATA_OID);

    if (!type || !PKCS7_add_signed_attribute(si, NID_pkcs9_contentType, V_ASN1_OBJECT, type)) {
        ASN1_OBJECT_free(type);
        return rs_fail_ssl(err, "cannot add contentType attribute");
    }
    if (opts->signing_time) {
        ASN1_TIME *t = ASN1_TIME_set(NULL, opts->time);

        if (!t || !PKCS7_add0_attrib_signing_time(si, t)) {
            ASN1_TIME_free(t);
            return rs_fail_ssl(err, "cannot add signingTime attribute");
        }
    }
    if (!PKCS7_add1_attrib_digest(si, md, (int)mdlen))
        return rs_fail_ssl(err, "cannot add messageDigest attribute");
    return 0;
}

/* Signs the DER SET of signed attributes through the signer interface,
 * so the key can live anywhere. */
static int sign_attributes(PKCS7_SIGNER_INFO *si, rs_signer *signer, const EVP_MD *md, rs_error *err)
{
    _cleanup_bytes_ rs_bytes sig = { 0 };
    unsigned char *attrs = NULL, digest[EVP_MAX_MD_SIZE];
    unsigned dlen = 0;
    int alen = ASN1_item_i2d((ASN1_VALUE *)si->auth_attr, &attrs, ASN1_ITEM_rptr(PKCS7_ATTR_SIGN));

    if (alen <= 0)
        return rs_fail_ssl(err, "cannot encode signed attributes");
    if (!EVP_Digest(attrs, (size_t)alen, digest, &dlen, md, NULL)) {
        OPENSSL_free(attrs);
        return rs_fail_ssl(err, "digest failed");
    }
    OPENSSL_free(attrs);
    if (rs_signer_sign_digest(signer, md, digest, dlen, &sig, err) < 0)
        return -1;
    if (!ASN1_STRING_set(si->enc_digest, sig.data, (int)sig.len))
        return rs_fail(err, "out of memory");
    return 0;
}

static int add_certificates(PKCS7 *p7, rs_signer *signer, rs_error *err)
{
    if (!PKCS7_add_certificate(p7, signer->cert))
        return rs_fail_ssl(err, "cannot add certificate");
    for (int i = 0; i < sk_X509_num(signer->chain); i++)
        if (!PKCS7_add_certificate(p7, sk_X509_value(signer->chain, i)))
            return rs_fail_ssl(err, "cannot add certificate");
    return 0;
}

/* The container around a signed SignerInfo: who signed (issuer and
 * serial, which the signature does not cover), the content, the
 * certificates. */
static int wrap_signer_info(PKCS7_SIGNER_INFO **si, const rs_bytes *idc, rs_signer *signer, const EVP_MD *md,
                            rs_bytes *der, rs_error *err)
{
    _cleanup_(rs_pkcs7p) PKCS7 *p7 = PKCS7_new();
    unsigned char *out = NULL;
    int len;

    if (!p7 || !PKCS7_set_type(p7, NID_pkcs7_signed))
        return rs_fail(err, "out of memory");
    /* The certificate's public key selects the signature algorithm; the
     * private key never passes through here. */
    if (!PKCS7_SIGNER_INFO_set(*si, signer->cert, signer->public_key, md) || !PKCS7_add_signer(p7, *si))
        return rs_fail_ssl(err, "cannot create SignerInfo");
    *si = NULL;   /* p7 owns it now */
    if (set_content(p7, idc, err) < 0 || add_certificates(p7, signer, err) < 0)
        return -1;
    len = i2d_PKCS7(p7, &out);
    if (len <= 0)
        return rs_fail_ssl(err, "cannot encode PKCS#7");
    rs_bytes_adopt(der, out, (size_t)len);
    return 0;
}

/* Signed first, wrapped after: a signer that only wants the digest to
 * sign (offline preparation) stops before the container is built. */
int authenticode_sign(const rs_digest *image_digest, rs_signer *signer, const rs_sign_options *opts, rs_bytes *der,
                      rs_error *err)
{
    _cleanup_(signer_info_freep) PKCS7_SIGNER_INFO *si = PKCS7_SIGNER_INFO_new();
    _cleanup_bytes_ rs_bytes idc = { 0 };
    const EVP_MD *md = image_digest->md;
    unsigned char content_md[EVP_MAX_MD_SIZE];
    unsigned content_len = 0;

    if (!si)
        return rs_fail(err, "out of memory");
    if (encode_indirect_data(image_digest, &idc, err) < 0 || hash_content(md, &idc, content_md, &content_len, err) < 0 ||
        add_signed_attributes(si, opts, content_md, content_len, err) < 0 || sign_attributes(si, signer, md, err) < 0)
        return -1;
    return wrap_signer_info(&si, &idc, signer, md, der, err);
}

size_t authenticode_der_length(const uint8_t *buf, size_t len)
{
    const unsigned char *p = buf;
    long body;
    int tag, xclass;

    if (len > LONG_MAX || (ASN1_get_object(&p, &body, &tag, &xclass, (long)len) & 0x80))
        return len;
    return (size_t)(p - buf) + (size_t)body;
}

/* A parsed Authenticode signature: the PKCS#7 and its decoded content. */
typedef struct parsed {
    PKCS7 *p7;
    SpcIndirectDataContent *idc;
    rs_bytes idc_der;
} parsed;

static void parsed_free(parsed *p)
{
    PKCS7_free(p->p7);
    SpcIndirectDataContent_free(p->idc);
    rs_bytes_free(&p->idc_der);
}

static int parse(const rs_bytes *der, parsed *out, rs_error *err)
{
    const unsigned char *p = der->data;
    ASN1_STRING *content;
    PKCS7 *inner;

    memset(out, 0, sizeof(*out));
    if (der->len > MAX_SIGNATURE)
        return rs_fail(err, "signature too large (%zu bytes)", der->len);
    out->p7 = d2i_PKCS7(NULL, &p, (long)der->len);
    if (!out->p7)
        return rs_fail_ssl(err, "signature is not valid PKCS#7 DER");
    if (!PKCS7_type_is_signed(out->p7) || !out->p7->d.sign || !out->p7->d.sign->contents)
        return rs_fail(err, "PKCS#7 is not SignedData");
    inner = out->p7->d.sign->contents;
    if (!is_oid(inner->type, SPC_INDIRECT_DATA_OID) || !inner->d.other ||
        inner->d.other->type != V_ASN1_SEQUENCE)
        return rs_fail(err, "PKCS#7 content is not an Authenticode SpcIndirectDataContent");
    content = inner->d.other->value.sequence;
    if (rs_bytes_set(&out->idc_der, content->data, (size_t)content->length, err) < 0)
        return -1;
    p = out->idc_der.data;
    out->idc = d2i_SpcIndirectDataContent(NULL, &p, (long)out->idc_der.len);
    if (!out->idc)
        return rs_fail_ssl(err, "malformed SpcIndirectDataContent");
    if (!is_oid(out->idc->data->type, SPC_PE_IMAGE_DATA_OID))
        return rs_fail(err, "Authenticode content is not for a PE image (not SpcPeImageData)");
    if (sk_PKCS7_SIGNER_INFO_num(PKCS7_get_signer_info(out->p7)) != 1)
        return rs_fail(err, "Authenticode requires exactly one SignerInfo");
    return 0;
}

static int bound_digest(const parsed *ps, rs_digest *out, rs_error *err)
{
    const X509_ALGOR *algor;
    const ASN1_OCTET_STRING *dg;
    const ASN1_OBJECT *alg;

    X509_SIG_get0(ps->idc->messageDigest, &algor, &dg);
    X509_ALGOR_get0(&alg, NULL, NULL, algor);

    memset(out, 0, sizeof(*out));
    out->md = EVP_get_digestbyobj(alg);
    if (!out->md)
        return rs_fail(err, "unknown image digest algorithm in signature");
    if (dg->length != EVP_MD_get_size(out->md))
        return rs_fail(err, "image digest in signature has the wrong length (%d bytes)", dg->length);
    out->len = (unsigned)dg->length;
    memcpy(out->bytes, dg->data, out->len);
    return 0;
}

int authenticode_bound_digest(const rs_bytes *der, rs_digest *out, rs_error *err)
{
    _cleanup_(parsed_free) parsed ps;
    int rc = parse(der, &ps, err);

    return rc < 0 ? rc : bound_digest(&ps, out, err);
}

static void describe_signer(PKCS7 *p7, PKCS7_SIGNER_INFO *si, rs_sig_info *info)
{
    STACK_OF(X509) *certs = p7->d.sign->cert;
    X509 *cert = X509_find_by_issuer_and_serial(certs, si->issuer_and_serial->issuer,
                                                si->issuer_and_serial->serial);

    info->issuer = rs_x509_name(si->issuer_and_serial->issuer);
    info->serial = rs_asn1_int_hex(si->issuer_and_serial->serial);
    if (cert)
        info->subject = rs_x509_name(X509_get_subject_name(cert));
}

int authenticode_describe(const rs_bytes *der, rs_sig_info *info, rs_error *err)
{
    _cleanup_(parsed_free) parsed ps;
    PKCS7_SIGNER_INFO *si;
    ASN1_TYPE *t;

    memset(info, 0, sizeof(*info));
    if (parse(der, &ps, err) < 0 || bound_digest(&ps, &info->bound_digest, err) < 0)
        return -1;
    info->kind = "authenticode";
    info->length = der->len;
    si = sk_PKCS7_SIGNER_INFO_value(PKCS7_get_signer_info(ps.p7), 0);
    describe_signer(ps.p7, si, info);
    info->md = EVP_get_digestbyobj(si->digest_alg->algorithm);
    t = PKCS7_get_signed_attribute(si, NID_pkcs9_signingTime);
    if (t && (t->type == V_ASN1_UTCTIME || t->type == V_ASN1_GENERALIZEDTIME))
        rs_asn1_time_iso(t->value.utctime, info->signing_time);
    return 0;
}

/* Feeds the content through a digest BIO so OpenSSL's own SignerInfo
 * check (messageDigest attribute, then the signature) can run. */
static int check_signature(parsed *ps, X509 *signer, rs_error *err)
{
    PKCS7_SIGNER_INFO *si = sk_PKCS7_SIGNER_INFO_value(PKCS7_get_signer_info(ps->p7), 0);
    const EVP_MD *md = EVP_get_digestbyobj(si->digest_alg->algorithm);
    _cleanup_(rs_biop) BIO *chain = NULL;
    BIO *mdbio, *sink;
    const uint8_t *value;
    long vlen;

    if (!md)
        return rs_fail(err, "unknown digest algorithm in SignerInfo");
    if (content_value(ps->idc_der.data, ps->idc_der.len, &value, &vlen) < 0)
        return rs_fail(err, "malformed SpcIndirectDataContent");
    mdbio = BIO_new(BIO_f_md());
    sink = BIO_new(BIO_s_null());
    if (!mdbio || !sink) {
        BIO_free(mdbio);
        BIO_free(sink);
        return rs_fail(err, "out of memory");
    }
    chain = BIO_push(mdbio, sink);
    if (!BIO_set_md(mdbio, md) || BIO_write(mdbio, value, (int)vlen) != (int)vlen)
        return rs_fail_ssl(err, "digest failed");
    if (PKCS7_signatureVerify(chain, ps->p7, si, signer) != 1)
        return rs_fail_ssl(err, "PKCS#7 signature does not verify");
    return 0;
}

int authenticode_verify(const rs_bytes *der, const rs_trust *trust, rs_verify_report *report, rs_error *err)
{
    _cleanup_(parsed_free) parsed ps;
    _cleanup_(rs_x509_refsp) STACK_OF(X509) *signers = NULL;
    rs_error why;
    X509 *signer;

    if (parse(der, &ps, err) < 0)
        return -1;
    signers = PKCS7_get0_signers(ps.p7, NULL, 0);
    if (!signers || sk_X509_num(signers) != 1) {
        ERR_clear_error();
        snprintf(report->reason, sizeof(report->reason), "signer certificate is not in the signature");
        return 0;
    }
    signer = sk_X509_value(signers, 0);
    report->signer = rs_x509_name(X509_get_subject_name(signer));
    if (check_signature(&ps, signer, &why) < 0 ||
        rs_trust_chain(trust, signer, ps.p7->d.sign->cert, &report->anchor, &why) < 0) {
        snprintf(report->reason, sizeof(report->reason), "%s", why.msg);
        return 0;
    }
    report->ok = true;
    return 0;
}

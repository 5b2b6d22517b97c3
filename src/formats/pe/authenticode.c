/* Reading Authenticode signatures: their bound digest, what `list`
 * shows, and verification. */
#include "formats/pe/authenticode.h"

#include <openssl/err.h>
#include <openssl/objects.h>
#include <stdbool.h>
#include <string.h>

#include "crypto/ossl.h"
#include "formats/pe/authenticode_asn1.h"

/* Any PKCS#7 larger than this is not something firmware would accept. */
#define MAX_SIGNATURE (1024 * 1024)

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
    if (!authenticode_is_oid(inner->type, SPC_INDIRECT_DATA_OID) || !inner->d.other ||
        inner->d.other->type != V_ASN1_SEQUENCE)
        return rs_fail(err, "PKCS#7 content is not an Authenticode SpcIndirectDataContent");
    content = inner->d.other->value.sequence;
    if (rs_bytes_set(&out->idc_der, content->data, (size_t)content->length, err) < 0)
        return -1;
    p = out->idc_der.data;
    out->idc = d2i_SpcIndirectDataContent(NULL, &p, (long)out->idc_der.len);
    if (!out->idc)
        return rs_fail_ssl(err, "malformed SpcIndirectDataContent");
    if (!authenticode_is_oid(out->idc->data->type, SPC_PE_IMAGE_DATA_OID))
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
    if (authenticode_content_value(ps->idc_der.data, ps->idc_der.len, &value, &vlen) < 0)
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

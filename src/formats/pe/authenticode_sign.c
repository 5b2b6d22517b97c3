/* Making Authenticode signatures in two phases: the signed attributes the
 * key signs (to_be_signed), then the PKCS#7 SignedData around the key's
 * signature over them (assemble). Only the second needs the certificate's
 * issuer and serial, so the key can sign anywhere in between. */
#include <limits.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <string.h>

#include "crypto/ossl.h"
#include "formats/pe/authenticode.h"
#include "formats/pe/authenticode_asn1.h"

static void attributes_free(STACK_OF(X509_ATTRIBUTE) *attrs)
{
    sk_X509_ATTRIBUTE_pop_free(attrs, X509_ATTRIBUTE_free);
}

DEFINE_POINTER_CLEANUP(attributes_freep, STACK_OF(X509_ATTRIBUTE), attributes_free)

/* "<<<Obsolete>>>" in UTF-16BE, the file link every signer writes. */
static const uint8_t obsolete_bmp[] = { 0, '<', 0, '<', 0, '<', 0, 'O', 0, 'b', 0, 's', 0, 'o',
                                        0, 'l', 0, 'e', 0, 't', 0, 'e', 0, '>', 0, '>', 0, '>' };

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
    X509_ALGOR *alg;
    ASN1_OCTET_STRING *digest;
    int len;

    if (!idc || !seq || encode_pe_image_data(&pid, err) < 0)
        return -1;
    if (!ASN1_STRING_set(seq, pid.data, (int)pid.len))
        return rs_fail(err, "out of memory");
    idc->data->type = authenticode_oid(SPC_PE_IMAGE_DATA_OID);
    idc->data->value = ASN1_TYPE_new();
    if (!idc->data->type || !idc->data->value)
        return rs_fail(err, "out of memory");
    ASN1_TYPE_set(idc->data->value, V_ASN1_SEQUENCE, TAKE_PTR(seq));
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

static int hash_content(const EVP_MD *md, const rs_bytes *idc, unsigned char *out, unsigned *outlen, rs_error *err)
{
    const uint8_t *value;
    long vlen;

    if (authenticode_content_value(idc->data, idc->len, &value, &vlen) < 0)
        return rs_fail(err, "malformed SpcIndirectDataContent");
    if (!EVP_Digest(value, (size_t)vlen, out, outlen, md, NULL))
        return rs_fail_ssl(err, "digest failed");
    return 0;
}

static int add_signed_attributes(PKCS7_SIGNER_INFO *si, const rs_sign_options *opts, const unsigned char *md,
                                 unsigned mdlen, rs_error *err)
{
    ASN1_OBJECT *type = authenticode_oid(SPC_INDIRECT_DATA_OID);

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

/* The DER SET of signed attributes: contentType, signingTime when asked
 * for, and messageDigest, the hash of the content for this image digest. */
int authenticode_to_be_signed(const rs_digest *image_digest, X509 *cert, const rs_sign_options *opts, rs_bytes *tbs,
                              rs_error *err)
{
    _cleanup_(signer_info_freep) PKCS7_SIGNER_INFO *si = PKCS7_SIGNER_INFO_new();
    _cleanup_bytes_ rs_bytes idc = { 0 };
    unsigned char content_md[EVP_MAX_MD_SIZE], *der = NULL;
    unsigned content_len = 0;
    int len;

    if (!si)
        return rs_fail(err, "out of memory");
    /* Any certificate with a key does: the signer is named by issuer and
     * serial, which every certificate has. */
    if (!X509_get0_pubkey(cert))
        return rs_fail_ssl(err, "the certificate's public key cannot be read");
    if (encode_indirect_data(image_digest, &idc, err) < 0 ||
        hash_content(image_digest->md, &idc, content_md, &content_len, err) < 0 ||
        add_signed_attributes(si, opts, content_md, content_len, err) < 0)
        return -1;
    len = ASN1_item_i2d((ASN1_VALUE *)si->auth_attr, &der, ASN1_ITEM_rptr(PKCS7_ATTR_SIGN));
    if (len <= 0)
        return rs_fail_ssl(err, "cannot encode signed attributes");
    rs_bytes_adopt(tbs, der, (size_t)len);
    return 0;
}

/* Decodes the signed attributes and checks that their messageDigest is
 * this content's: attributes made for another image would make a
 * signature that verifies over nothing it carries. */
static int decode_attributes(const rs_bytes *tbs, const rs_bytes *idc, const EVP_MD *md,
                             STACK_OF(X509_ATTRIBUTE) **out, rs_error *err)
{
    _cleanup_(attributes_freep) STACK_OF(X509_ATTRIBUTE) *attrs = NULL;
    const unsigned char *p = tbs->data;
    unsigned char content_md[EVP_MAX_MD_SIZE];
    unsigned content_len = 0;
    ASN1_OCTET_STRING *bound;

    if (tbs->len > LONG_MAX)
        return rs_fail(err, "signed attributes too large");
    attrs = (STACK_OF(X509_ATTRIBUTE) *)ASN1_item_d2i(NULL, &p, (long)tbs->len, ASN1_ITEM_rptr(PKCS7_ATTR_SIGN));
    if (!attrs || p != tbs->data + tbs->len)
        return rs_fail_ssl(err, "the bytes to be signed are not DER signed attributes");
    if (hash_content(md, idc, content_md, &content_len, err) < 0)
        return -1;
    bound = PKCS7_digest_from_attributes(attrs);
    if (!bound || (unsigned)bound->length != content_len || memcmp(bound->data, content_md, content_len) != 0)
        return rs_fail(err, "the signed attributes were made for another image digest");
    *out = TAKE_PTR(attrs);
    return 0;
}

static int add_certificates(PKCS7 *p7, X509 *cert, STACK_OF(X509) *chain, rs_error *err)
{
    if (!PKCS7_add_certificate(p7, cert))
        return rs_fail_ssl(err, "cannot add certificate");
    for (int i = 0; i < sk_X509_num(chain); i++)
        if (!PKCS7_add_certificate(p7, sk_X509_value(chain, i)))
            return rs_fail_ssl(err, "cannot add certificate");
    return 0;
}

static int set_content(PKCS7 *p7, const rs_bytes *idc, rs_error *err)
{
    _cleanup_(rs_pkcs7p) PKCS7 *inner = PKCS7_new();
    _cleanup_(rs_asn1strp) ASN1_STRING *seq = ASN1_STRING_new();

    if (!inner || !seq || !ASN1_STRING_set(seq, idc->data, (int)idc->len))
        return rs_fail(err, "out of memory");
    inner->type = authenticode_oid(SPC_INDIRECT_DATA_OID);
    inner->d.other = ASN1_TYPE_new();
    if (!inner->type || !inner->d.other)
        return rs_fail(err, "out of memory");
    ASN1_TYPE_set(inner->d.other, V_ASN1_SEQUENCE, TAKE_PTR(seq));
    if (!PKCS7_set_content(p7, inner))
        return rs_fail_ssl(err, "cannot set PKCS#7 content");
    inner = NULL;
    return 0;
}

/* The container around a signed SignerInfo: who signed (issuer and
 * serial, which the signature does not cover), the content, the
 * certificates. */
static int wrap_signer_info(PKCS7_SIGNER_INFO **si, const rs_bytes *idc, X509 *cert, STACK_OF(X509) *chain,
                            const EVP_MD *md, rs_bytes *der, rs_error *err)
{
    _cleanup_(rs_pkcs7p) PKCS7 *p7 = PKCS7_new();
    unsigned char *out = NULL;
    int len;

    if (!p7 || !PKCS7_set_type(p7, NID_pkcs7_signed))
        return rs_fail(err, "out of memory");
    /* The certificate's public key selects the signature algorithm; the
     * private key never passes through here. */
    if (!PKCS7_SIGNER_INFO_set(*si, cert, X509_get0_pubkey(cert), md) || !PKCS7_add_signer(p7, *si))
        return rs_fail_ssl(err, "cannot create SignerInfo");
    *si = NULL;   /* p7 owns it now */
    if (set_content(p7, idc, err) < 0 || add_certificates(p7, cert, chain, err) < 0)
        return -1;
    len = i2d_PKCS7(p7, &out);
    if (len <= 0)
        return rs_fail_ssl(err, "cannot encode PKCS#7");
    rs_bytes_adopt(der, out, (size_t)len);
    return 0;
}

int authenticode_assemble(const rs_digest *image_digest, const rs_bytes *tbs, const rs_bytes *signature, X509 *cert,
                          STACK_OF(X509) *chain, const rs_sign_options *opts, rs_bytes *der, rs_error *err)
{
    _cleanup_(signer_info_freep) PKCS7_SIGNER_INFO *si = PKCS7_SIGNER_INFO_new();
    _cleanup_bytes_ rs_bytes idc = { 0 };

    (void)opts;   /* what they chose is in the signed attributes already */
    if (!si)
        return rs_fail(err, "out of memory");
    if (encode_indirect_data(image_digest, &idc, err) < 0 ||
        decode_attributes(tbs, &idc, image_digest->md, &si->auth_attr, err) < 0)
        return -1;
    if (signature->len > INT_MAX || !ASN1_STRING_set(si->enc_digest, signature->data, (int)signature->len))
        return rs_fail(err, "out of memory");
    return wrap_signer_info(&si, &idc, cert, chain, image_digest->md, der, err);
}

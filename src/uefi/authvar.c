#include "uefi/authvar.h"

#include <openssl/err.h>
#include <string.h>

#include "crypto/ossl.h"

#define WIN_CERT_REVISION 0x0200
#define WIN_CERT_TYPE_EFI_GUID 0x0EF1
#define MAX_NAME 512

/* The bytes the signature covers. */
static int signed_payload(const char *name, const efi_guid *guid, uint32_t attributes,
                          const uint8_t timestamp[EFI_TIME_SIZE], const uint8_t *data, size_t len, rs_bytes *out,
                          rs_error *err)
{
    size_t n = strlen(name);
    uint8_t attr[4];

    if (n == 0 || n > MAX_NAME)
        return rs_fail(err, "invalid variable name length");
    for (size_t i = 0; i < n; i++) {
        uint8_t c[2] = { (uint8_t)name[i], 0 };

        if (rs_bytes_append(out, c, 2, err) < 0)
            return -1;
    }
    efi_put32(attr, attributes);
    if (rs_bytes_append(out, guid->b, 16, err) < 0 || rs_bytes_append(out, attr, 4, err) < 0 ||
        rs_bytes_append(out, timestamp, EFI_TIME_SIZE, err) < 0)
        return -1;
    return rs_bytes_append(out, data, len, err);
}

/* SignedData with detached pkcs7-data content and no signed attributes, as
 * sign-efi-sig-list builds it; the signature is over the payload digest. */
static int build_signed_data(const rs_bytes *payload, rs_signer *signer, rs_bytes *der, rs_error *err)
{
    _cleanup_(rs_pkcs7p) PKCS7 *p7 = PKCS7_new();
    _cleanup_bytes_ rs_bytes sig = { 0 };
    const EVP_MD *md = EVP_sha256();
    unsigned char digest[EVP_MAX_MD_SIZE], *out = NULL;
    unsigned dlen = 0;
    PKCS7_SIGNER_INFO *si;
    int len;

    if (!p7 || !PKCS7_set_type(p7, NID_pkcs7_signed) || !PKCS7_content_new(p7, NID_pkcs7_data))
        return rs_fail_ssl(err, "cannot create PKCS#7");
    si = PKCS7_add_signature(p7, signer->cert, signer->public_key, md);
    if (!si || !PKCS7_add_certificate(p7, signer->cert))
        return rs_fail_ssl(err, "cannot create SignerInfo");
    for (int i = 0; i < sk_X509_num(signer->chain); i++)
        if (!PKCS7_add_certificate(p7, sk_X509_value(signer->chain, i)))
            return rs_fail_ssl(err, "cannot add certificate");
    PKCS7_set_detached(p7, 1);
    if (!EVP_Digest(payload->data, payload->len, digest, &dlen, md, NULL))
        return rs_fail_ssl(err, "digest failed");
    if (rs_signer_sign_digest(signer, md, digest, dlen, &sig, err) < 0)
        return -1;
    if (!ASN1_STRING_set(si->enc_digest, sig.data, (int)sig.len))
        return rs_fail(err, "out of memory");
    len = i2d_PKCS7_SIGNED(p7->d.sign, &out);
    if (len <= 0)
        return rs_fail_ssl(err, "cannot encode PKCS#7 SignedData");
    rs_bytes_adopt(der, out, (size_t)len);
    return 0;
}

static int append_header(rs_bytes *out, const uint8_t ts[EFI_TIME_SIZE], size_t sig_len, rs_error *err)
{
    uint8_t h[24];

    if (sig_len > UINT32_MAX - 24)
        return rs_fail(err, "signature too large");
    efi_put32(h, (uint32_t)(24 + sig_len));
    efi_put16(h + 4, WIN_CERT_REVISION);
    efi_put16(h + 6, WIN_CERT_TYPE_EFI_GUID);
    memcpy(h + 8, efi_guid_cert_pkcs7.b, 16);
    if (rs_bytes_append(out, ts, EFI_TIME_SIZE, err) < 0)
        return -1;
    return rs_bytes_append(out, h, sizeof(h), err);
}

int authvar_sign(const authvar_target *t, const uint8_t *data, size_t len, rs_signer *signer, rs_bytes *out,
                 rs_error *err)
{
    _cleanup_bytes_ rs_bytes payload = { 0 }, sig = { 0 };

    if (signed_payload(t->name, t->guid, t->attributes, t->timestamp, data, len, &payload, err) < 0 ||
        build_signed_data(&payload, signer, &sig, err) < 0 || append_header(out, t->timestamp, sig.len, err) < 0 ||
        rs_bytes_append(out, sig.data, sig.len, err) < 0)
        return -1;
    return rs_bytes_append(out, data, len, err);
}

int authvar_parse(const uint8_t *buf, size_t len, authvar *out, rs_error *err)
{
    const uint8_t *ts = buf, *cert = buf + EFI_TIME_SIZE;
    uint32_t cert_len;
    efi_guid type;

    memset(out, 0, sizeof(*out));
    if (len < AUTHVAR_HEADER)
        return rs_fail(err, "too short for an authenticated variable header (%zu bytes, need %d)", len,
                       AUTHVAR_HEADER);
    cert_len = efi_le32(cert);
    /* The header of a WIN_CERTIFICATE_UEFI_GUID is 24 bytes; a PKCS#7 follows it. */
    if (cert_len <= 24)
        return rs_fail(err, "WIN_CERTIFICATE length %u leaves no room for a signature after its 24-byte header",
                       cert_len);
    if (cert_len > len - EFI_TIME_SIZE)
        return rs_fail(err, "WIN_CERTIFICATE length %u does not fit in the %zu bytes after the timestamp", cert_len,
                       len - EFI_TIME_SIZE);
    memcpy(type.b, cert + 8, 16);
    if (efi_le16(cert + 4) != WIN_CERT_REVISION || efi_le16(cert + 6) != WIN_CERT_TYPE_EFI_GUID ||
        !efi_guid_equal(&type, &efi_guid_cert_pkcs7))
        return rs_fail(err, "not an EFI_VARIABLE_AUTHENTICATION_2 header (WIN_CERTIFICATE revision 0x%04x, type "
                            "0x%04x, or its CertType is not PKCS#7)",
                       efi_le16(cert + 4), efi_le16(cert + 6));
    /* Firmware refuses a timestamp with any of these set. */
    if (ts[7] || efi_le32(ts + 8) || efi_le16(ts + 12) || ts[14] || ts[15])
        return rs_fail(err, "timestamp has non-zero Pad1/Nanosecond/TimeZone/Daylight/Pad2 fields");
    memcpy(out->timestamp, ts, EFI_TIME_SIZE);
    out->pkcs7 = cert + 24;
    out->pkcs7_len = cert_len - 24;
    out->data = cert + cert_len;
    out->data_len = len - EFI_TIME_SIZE - cert_len;
    return 0;
}

/* Firmware takes the bare SignedData or a full ContentInfo; wrap the
 * former so OpenSSL's PKCS#7 functions can use it. */
static int parse_pkcs7(const authvar *a, PKCS7 **out, rs_error *err)
{
    const unsigned char *p = a->pkcs7;
    _cleanup_(rs_pkcs7p) PKCS7 *p7 = NULL;
    PKCS7_SIGNED *sd;

    if (a->pkcs7_len > LONG_MAX)
        return rs_fail(err, "signature too large");
    p7 = d2i_PKCS7(NULL, &p, (long)a->pkcs7_len);
    if (!p7) {
        ERR_clear_error();
        p = a->pkcs7;
        sd = d2i_PKCS7_SIGNED(NULL, &p, (long)a->pkcs7_len);
        if (!sd)
            return rs_fail_ssl(err, "authenticated variable signature is not PKCS#7 SignedData");
        p7 = PKCS7_new();
        if (!p7 || !PKCS7_set_type(p7, NID_pkcs7_signed)) {
            PKCS7_SIGNED_free(sd);
            return rs_fail(err, "out of memory");
        }
        PKCS7_SIGNED_free(p7->d.sign);
        p7->d.sign = sd;
    }
    if (!PKCS7_type_is_signed(p7) || !p7->d.sign || !p7->d.sign->contents)
        return rs_fail(err, "authenticated variable signature is not PKCS#7 SignedData");
    *out = TAKE_PTR(p7);
    return 0;
}

static int only_signer(PKCS7 *p7, X509 **signer, rs_error *err)
{
    STACK_OF(X509) *signers = PKCS7_get0_signers(p7, NULL, 0);

    if (!signers || sk_X509_num(signers) != 1) {
        sk_X509_free(signers);
        ERR_clear_error();
        return rs_fail(err, "authenticated variable signature must carry its one signer's certificate");
    }
    *signer = sk_X509_value(signers, 0);
    sk_X509_free(signers);
    return 0;
}

int authvar_signer(const authvar *a, X509 **cert, rs_error *err)
{
    _cleanup_(rs_pkcs7p) PKCS7 *p7 = NULL;
    X509 *signer = NULL;

    if (parse_pkcs7(a, &p7, err) < 0 || only_signer(p7, &signer, err) < 0)
        return -1;
    if (!X509_up_ref(signer))
        return rs_fail_ssl(err, "cannot reference certificate");
    *cert = signer;
    return 0;
}

int authvar_verify(const authvar *a, const char *name, const efi_guid *guid, uint32_t attributes,
                   const rs_trust *trust, char **signer_name, rs_error *err)
{
    _cleanup_(rs_pkcs7p) PKCS7 *p7 = NULL;
    _cleanup_bytes_ rs_bytes payload = { 0 };
    _cleanup_(rs_biop) BIO *content = NULL;
    X509 *signer = NULL;

    if (parse_pkcs7(a, &p7, err) < 0 || only_signer(p7, &signer, err) < 0 ||
        signed_payload(name, guid, attributes, a->timestamp, a->data, a->data_len, &payload, err) < 0)
        return -1;
    content = BIO_new_mem_buf(payload.data, (int)payload.len);
    if (!content)
        return rs_fail(err, "out of memory");
    /* The chain is checked by rs_trust_chain, with firmware's rules. */
    if (PKCS7_verify(p7, NULL, NULL, content, NULL, PKCS7_BINARY | PKCS7_NOVERIFY) != 1)
        return rs_fail_ssl(err, "signature over %s does not verify", name);
    return rs_trust_chain(trust, signer, p7->d.sign->cert, signer_name, err);
}

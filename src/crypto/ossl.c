#include "crypto/ossl.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/file.h"
#include "base/iso_time.h"
#include "crypto/digest.h"

#define MAX_CERT_FILE (4 * 1024 * 1024)

static int load_der_or_pem(const rs_bytes *buf, STACK_OF(X509) *certs)
{
    const unsigned char *p = buf->data;
    X509 *cert = d2i_X509(NULL, &p, (long)buf->len);

    if (cert) {
        if (!sk_X509_push(certs, cert)) {
            X509_free(cert);
            return -1;
        }
        return 0;
    }
    ERR_clear_error();
    _cleanup_(rs_biop) BIO *bio = BIO_new_mem_buf(buf->data, (int)buf->len);
    if (!bio)
        return -1;
    while ((cert = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
        if (!sk_X509_push(certs, cert)) {
            X509_free(cert);
            return -1;
        }
    }
    ERR_clear_error();
    return 0;
}

int rs_load_certs(const char *path, STACK_OF(X509) **out, rs_error *err)
{
    _cleanup_bytes_ rs_bytes buf = { 0 };
    _cleanup_(rs_x509_stackp) STACK_OF(X509) *certs = sk_X509_new_null();

    if (!certs)
        return rs_fail(err, "out of memory");
    if (rs_read_file(path, MAX_CERT_FILE, &buf, err) < 0)
        return rs_error_prefix(err, "%s", path);
    if (buf.len > INT32_MAX || load_der_or_pem(&buf, certs) < 0)
        return rs_fail(err, "%s: cannot parse certificates", path);
    if (sk_X509_num(certs) == 0)
        return rs_fail(err, "%s: no certificate found (expected PEM or DER X.509)", path);
    *out = TAKE_PTR(certs);
    return 0;
}

int rs_load_cert(const char *path, X509 **out, rs_error *err)
{
    _cleanup_(rs_x509_stackp) STACK_OF(X509) *certs = NULL;

    if (rs_load_certs(path, &certs, err) < 0)
        return -1;
    *out = sk_X509_shift(certs);
    return 0;
}

char *rs_x509_name(const X509_NAME *name)
{
    _cleanup_(rs_biop) BIO *bio = BIO_new(BIO_s_mem());
    char *data, *copy;
    long len;

    if (!bio || X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB) < 0)
        return strdup("");
    len = BIO_get_mem_data(bio, &data);
    copy = malloc((size_t)len + 1);
    if (!copy)
        return NULL;
    memcpy(copy, data, (size_t)len);
    copy[len] = '\0';
    return copy;
}

char *rs_asn1_int_hex(const ASN1_INTEGER *i)
{
    BIGNUM *bn = ASN1_INTEGER_to_BN(i, NULL);
    char *hex, *copy;

    if (!bn)
        return strdup("");
    hex = BN_bn2hex(bn);
    BN_free(bn);
    if (!hex)
        return strdup("");
    copy = strdup(hex);
    OPENSSL_free(hex);
    for (char *c = copy; c && *c; c++)
        if (*c >= 'A' && *c <= 'F')
            *c = (char)(*c - 'A' + 'a');
    return copy;
}

void rs_sha256(const void *data, size_t len, uint8_t out[32])
{
    const EVP_MD *md;

    /* SHA256() looks the algorithm up again on every call, which costs
     * more than hashing the few hundred bytes of a log entry. */
    if (rs_md_by_name("sha256", &md, NULL) < 0 || !EVP_Digest(data, len, out, NULL, md, NULL))
        SHA256(data, len, out);
}

void rs_x509_fingerprint(X509 *cert, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    const EVP_MD *sha256;

    if (rs_md_by_name("sha256", &sha256, NULL) < 0 || !X509_digest(cert, sha256, md, &len) || len != 32) {
        out[0] = '\0';
        return;
    }
    rs_hex(md, len, out);
}

/* Through rs_iso_time, so every time reprosign prints is spelled alike. */
void rs_asn1_time_iso(const ASN1_TIME *t, char out[32])
{
    struct tm tm;

    out[0] = '\0';
    if (t && ASN1_TIME_to_tm(t, &tm))
        rs_iso_time(timegm(&tm), out);
}

char *rs_base64_encode(const uint8_t *data, size_t len)
{
    char *text = len <= INT32_MAX / 2 ? malloc(4 * ((len + 2) / 3) + 1) : NULL;

    if (text)
        EVP_EncodeBlock((unsigned char *)text, data, (int)len);
    return text;
}

int rs_base64_decode(const char *text, size_t max, rs_bytes *out, rs_error *err)
{
    size_t len = text ? strlen(text) : 0;
    uint8_t *raw;
    int n;

    if (!len || len % 4 || len / 4 * 3 > max)
        return rs_fail(err, "not base64 of at most %zu bytes", max);
    raw = malloc(len / 4 * 3);
    if (!raw)
        return rs_fail(err, "out of memory");
    n = EVP_DecodeBlock(raw, (const unsigned char *)text, (int)len);
    if (n < 0) {
        free(raw);
        return rs_fail(err, "not base64");
    }
    /* EVP_DecodeBlock counts the '=' padding as decoded bytes. */
    n -= (text[len - 1] == '=') + (text[len - 2] == '=');
    rs_bytes_adopt(out, raw, (size_t)n);
    return 0;
}

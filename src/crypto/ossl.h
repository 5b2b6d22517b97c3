/* Cleanup helpers for OpenSSL objects, and small X.509 conveniences. */
#ifndef RS_OSSL_H
#define RS_OSSL_H

#include <openssl/bio.h>
#include <openssl/cms.h>
#include <openssl/evp.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>

#include "base/bytes.h"
#include "base/cleanup.h"
#include "base/error.h"

DEFINE_POINTER_CLEANUP(rs_x509p, X509, X509_free)
DEFINE_POINTER_CLEANUP(rs_pkeyp, EVP_PKEY, EVP_PKEY_free)
DEFINE_POINTER_CLEANUP(rs_biop, BIO, BIO_free_all)
DEFINE_POINTER_CLEANUP(rs_mdctxp, EVP_MD_CTX, EVP_MD_CTX_free)
DEFINE_POINTER_CLEANUP(rs_pkctxp, EVP_PKEY_CTX, EVP_PKEY_CTX_free)
DEFINE_POINTER_CLEANUP(rs_pkcs7p, PKCS7, PKCS7_free)
DEFINE_POINTER_CLEANUP(rs_cmsp, CMS_ContentInfo, CMS_ContentInfo_free)
DEFINE_POINTER_CLEANUP(rs_storep, X509_STORE, X509_STORE_free)
DEFINE_POINTER_CLEANUP(rs_storectxp, X509_STORE_CTX, X509_STORE_CTX_free)
DEFINE_POINTER_CLEANUP(rs_asn1objp, ASN1_OBJECT, ASN1_OBJECT_free)
DEFINE_POINTER_CLEANUP(rs_asn1strp, ASN1_STRING, ASN1_STRING_free)
DEFINE_POINTER_CLEANUP(rs_asn1timep, ASN1_TIME, ASN1_TIME_free)
DEFINE_POINTER_CLEANUP(rs_opensslp, void, OPENSSL_free)

static inline void rs_x509_stackp(STACK_OF(X509) **p)
{
    if (*p)
        sk_X509_pop_free(*p, X509_free);
}

/* For stacks whose certificates are borrowed (get0). */
static inline void rs_x509_refsp(STACK_OF(X509) **p)
{
    if (*p)
        sk_X509_free(*p);
}

/* Loads every certificate (PEM or DER) in a file; at least one is required. */
int rs_load_certs(const char *path, STACK_OF(X509) **out, rs_error *err);
/* Loads exactly the first certificate. */
int rs_load_cert(const char *path, X509 **out, rs_error *err);
/* Subject/issuer in RFC 2253-ish one-line form; caller frees with free(). */
char *rs_x509_name(const X509_NAME *name);
/* Serial number in hex, caller frees with free(). */
char *rs_asn1_int_hex(const ASN1_INTEGER *i);
/* SHA-256 of data, with the algorithm fetched once per process. */
void rs_sha256(const void *data, size_t len, uint8_t out[32]);
/* SHA-256 fingerprint of the DER certificate, lower-case hex. */
void rs_x509_fingerprint(X509 *cert, char out[65]);
/* Standard padded base64 of data; caller frees. NULL when out of memory. */
char *rs_base64_encode(const uint8_t *data, size_t len);
/* Decodes standard padded base64 into at most max bytes. */
int rs_base64_decode(const char *text, size_t max, rs_bytes *out, rs_error *err);
/* Time in ISO 8601 UTC ("2024-01-02T03:04:05Z"); empty string if unparsable. */
void rs_asn1_time_iso(const ASN1_TIME *t, char out[32]);

#endif

/* A signer holds a private key somewhere (a PEM file, a PKCS#11 token) and
 * does one thing: sign a digest. Everything that builds signature
 * containers (Authenticode PKCS#7, module CMS) is written against this
 * interface, so it never knows where the key lives. */
#ifndef RS_SIGNER_H
#define RS_SIGNER_H

#include <openssl/evp.h>
#include <openssl/x509.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/bytes.h"
#include "base/error.h"

typedef struct rs_signer rs_signer;

typedef struct rs_signer_ops {
    /* Signs an already computed digest of type md. For RSA the result is a
     * PKCS#1 v1.5 signature over DigestInfo(md, digest); for ECDSA a DER
     * ECDSA-Sig-Value. Must be safe to call from several threads. */
    int (*sign_digest)(rs_signer *s, const EVP_MD *md, const uint8_t *digest, size_t len, rs_bytes *sig,
                       rs_error *err);
    /* Optional: whether the key is the private half of cert_key, checked
     * without signing. Backends without it get a probe signature. */
    bool (*matches)(rs_signer *s, EVP_PKEY *cert_key);
    void (*destroy)(rs_signer *s);
} rs_signer_ops;

struct rs_signer {
    const rs_signer_ops *ops;
    X509 *cert;              /* the signer's certificate */
    STACK_OF(X509) *chain;   /* extra certificates to embed (may be empty) */
    EVP_PKEY *public_key;    /* the certificate's key: picks the algorithm */
};

/* Opens the key named by key_spec (a file path, or a pkcs11: URI) with the
 * certificate named by cert_spec (file path or pkcs11: URI), and checks
 * that they belong together. */
int rs_signer_open(const char *key_spec, const char *cert_spec, rs_signer **out, rs_error *err);
/* The same with a certificate already in hand (not taken over). */
int rs_signer_open_with_cert(const char *key_spec, X509 *cert, rs_signer **out, rs_error *err);
/* Adds intermediate certificates from a file to embed in signatures. */
int rs_signer_add_chain(rs_signer *s, const char *path, rs_error *err);
int rs_signer_sign_digest(rs_signer *s, const EVP_MD *md, const uint8_t *digest, size_t len, rs_bytes *sig,
                          rs_error *err);
/* The other half: checks a signature over a digest with a public key
 * (PKCS#1 v1.5 for RSA, DER ECDSA-Sig-Value for EC). */
int rs_verify_digest(EVP_PKEY *key, const EVP_MD *md, const uint8_t *digest, size_t len, const uint8_t *sig,
                     size_t siglen, rs_error *err);
void rs_signer_free(rs_signer *s);
static inline void rs_signerp(rs_signer **s)
{
    if (*s)
        rs_signer_free(*s);
}

/* Backends. `base` is filled in by the caller (cert, chain, public key). */
int rs_signer_pem_open(const char *path, rs_signer **out, rs_error *err);
int rs_signer_pkcs11_open(const char *uri, rs_signer **out, rs_error *err);
/* Reads a certificate from a token. When `key` is a PKCS#11 signer on the
 * same token its session is used (no second login); key may be NULL. */
int rs_signer_pkcs11_cert(const char *uri, rs_signer *key, X509 **out, rs_error *err);
/* How many sessions a PKCS#11 signer has open on its token: one per thread
 * that signed at the same time, up to the token's limit (0 for another
 * backend). */
size_t rs_signer_pkcs11_sessions(rs_signer *s);

/* Loads a certificate from a file or a pkcs11: URI. */
int rs_cert_open(const char *spec, X509 **out, rs_error *err);

/* Shared by backends and rs_signer_open. */
int rs_signer_init_base(rs_signer *s, X509 *cert, rs_error *err);

#endif

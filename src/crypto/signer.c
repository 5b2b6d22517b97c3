#include "crypto/signer.h"

#include <stdbool.h>
#include <string.h>

#include "base/child_env.h"
#include "crypto/ossl.h"
#include "crypto/pkcs11_uri.h"

int rs_signer_init_base(rs_signer *s, X509 *cert, rs_error *err)
{
    s->cert = cert;
    s->public_key = X509_get_pubkey(cert);
    if (!s->public_key)
        return rs_fail_ssl(err, "cannot read the certificate's public key");
    s->chain = sk_X509_new_null();
    if (!s->chain)
        return rs_fail(err, "out of memory");
    if (!EVP_PKEY_is_a(s->public_key, "RSA") && !EVP_PKEY_is_a(s->public_key, "EC"))
        return rs_fail(err, "unsupported key type %s (RSA or ECDSA required)", EVP_PKEY_get0_type_name(s->public_key));
    return 0;
}

/* A signature made with the key must verify with the certificate; this
 * catches a key and certificate that do not belong together before any
 * output is produced, whatever the backend. */
static int check_pair(rs_signer *s, rs_error *err)
{
    static const uint8_t probe[32] = { 'r', 'e', 'p', 'r', 'o', 's', 'i', 'g', 'n' };
    _cleanup_bytes_ rs_bytes sig = { 0 };

    if (s->ops->matches)
        return s->ops->matches(s, s->public_key) ? 0 : rs_fail(err, "the private key does not match the certificate");
    if (rs_signer_sign_digest(s, EVP_sha256(), probe, sizeof(probe), &sig, err) < 0)
        return -1;
    if (rs_verify_digest(s->public_key, EVP_sha256(), probe, sizeof(probe), sig.data, sig.len, err) < 0)
        return rs_fail(err, "the private key does not match the certificate");
    return 0;
}

int rs_verify_digest(EVP_PKEY *key, const EVP_MD *md, const uint8_t *digest, size_t len, const uint8_t *sig,
                     size_t siglen, rs_error *err)
{
    _cleanup_(rs_pkctxp) EVP_PKEY_CTX *ctx = key ? EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL) : NULL;

    if (!ctx || EVP_PKEY_verify_init(ctx) <= 0 || EVP_PKEY_CTX_set_signature_md(ctx, md) <= 0 ||
        (EVP_PKEY_is_a(key, "RSA") && EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) <= 0))
        return rs_fail_ssl(err, "cannot set up verification");
    if (EVP_PKEY_verify(ctx, sig, siglen, digest, len) != 1)
        return rs_fail_ssl(err, "the signature does not verify");
    return 0;
}

static bool is_pkcs11(const char *spec)
{
    return !strncmp(spec, "pkcs11:", 7);
}

int rs_cert_open(const char *spec, X509 **out, rs_error *err)
{
    return is_pkcs11(spec) ? rs_signer_pkcs11_cert(spec, NULL, out, err) : rs_load_cert(spec, out, err);
}

/* Prefixes an error with a key or certificate spec, never showing a PIN. */
static int prefix_spec(rs_error *err, const char *spec)
{
    _cleanup_free_ char *shown = is_pkcs11(spec) ? rs_p11_uri_display(spec) : NULL;

    return rs_error_prefix(err, "%s", shown ? shown : spec);
}

static int open_key(const char *key_spec, rs_signer **s, rs_error *err)
{
    return is_pkcs11(key_spec) ? rs_signer_pkcs11_open(key_spec, s, err) : rs_signer_pem_open(key_spec, s, err);
}

/* Takes cert; checks that the key is its private half. */
static int bind_cert(rs_signer *s, X509 *cert, const char *key_spec, const char *cert_spec, rs_error *err)
{
    if (rs_signer_init_base(s, cert, err) < 0)
        return prefix_spec(err, cert_spec);
    if (check_pair(s, err) < 0)
        return prefix_spec(err, key_spec);
    return 0;
}

int rs_signer_open(const char *key_spec, const char *cert_spec, rs_signer **out, rs_error *err)
{
    _cleanup_(rs_signerp) rs_signer *s = NULL;
    X509 *cert = NULL;
    int r;

    /* From here on the process holds a key (base/child_env.h). */
    rs_protect_key_memory();
    if (open_key(key_spec, &s, err) < 0)
        return -1;
    r = is_pkcs11(cert_spec) ? rs_signer_pkcs11_cert(cert_spec, s, &cert, err) : rs_load_cert(cert_spec, &cert, err);
    if (r < 0 || bind_cert(s, cert, key_spec, cert_spec, err) < 0)
        return -1;
    *out = TAKE_PTR(s);
    return 0;
}

int rs_signer_open_with_cert(const char *key_spec, X509 *cert, rs_signer **out, rs_error *err)
{
    _cleanup_(rs_signerp) rs_signer *s = NULL;

    if (open_key(key_spec, &s, err) < 0)
        return -1;
    if (!X509_up_ref(cert))
        return rs_fail(err, "out of memory");
    if (bind_cert(s, cert, key_spec, "the certificate", err) < 0)
        return -1;
    *out = TAKE_PTR(s);
    return 0;
}

int rs_signer_add_chain(rs_signer *s, const char *path, rs_error *err)
{
    _cleanup_(rs_x509_stackp) STACK_OF(X509) *certs = NULL;
    X509 *c;

    if (rs_load_certs(path, &certs, err) < 0)
        return -1;
    while ((c = sk_X509_shift(certs)) != NULL)
        if (!sk_X509_push(s->chain, c)) {
            X509_free(c);
            return rs_fail(err, "out of memory");
        }
    return 0;
}

int rs_signer_sign_digest(rs_signer *s, const EVP_MD *md, const uint8_t *digest, size_t len, rs_bytes *sig,
                          rs_error *err)
{
    if ((size_t)EVP_MD_get_size(md) != len)
        return rs_fail(err, "internal error: digest length does not match %s", EVP_MD_get0_name(md));
    return s->ops->sign_digest(s, md, digest, len, sig, err);
}

void rs_signer_free(rs_signer *s)
{
    X509_free(s->cert);
    EVP_PKEY_free(s->public_key);
    if (s->chain)
        sk_X509_pop_free(s->chain, X509_free);
    s->ops->destroy(s);
}

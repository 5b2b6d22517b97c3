/* The file backend: a PEM (or DER) private key on disk. */
#include <errno.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/decoder.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/file.h"
#include "crypto/ossl.h"
#include "crypto/signer.h"

#define MAX_KEY_FILE (1024 * 1024)

typedef struct pem_signer {
    rs_signer base;
    EVP_PKEY *key;
} pem_signer;

static int pem_sign_digest(rs_signer *s, const EVP_MD *md, const uint8_t *digest, size_t len, rs_bytes *sig,
                           rs_error *err)
{
    pem_signer *p = (pem_signer *)s;
    _cleanup_(rs_pkctxp) EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, p->key, NULL);
    size_t siglen = 0;
    uint8_t *buf;

    if (!ctx || EVP_PKEY_sign_init(ctx) <= 0 || EVP_PKEY_CTX_set_signature_md(ctx, md) <= 0)
        return rs_fail_ssl(err, "cannot set up signing");
    if (EVP_PKEY_is_a(p->key, "RSA") && EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) <= 0)
        return rs_fail_ssl(err, "cannot set up signing");
    if (EVP_PKEY_sign(ctx, NULL, &siglen, digest, len) <= 0)
        return rs_fail_ssl(err, "signing failed");
    buf = malloc(siglen);
    if (!buf)
        return rs_fail(err, "out of memory");
    if (EVP_PKEY_sign(ctx, buf, &siglen, digest, len) <= 0) {
        free(buf);
        return rs_fail_ssl(err, "signing failed");
    }
    rs_bytes_adopt(sig, buf, siglen);
    return 0;
}

static bool pem_matches(rs_signer *s, EVP_PKEY *cert_key)
{
    return EVP_PKEY_eq(((pem_signer *)s)->key, cert_key) == 1;
}

static void pem_destroy(rs_signer *s)
{
    pem_signer *p = (pem_signer *)s;

    EVP_PKEY_free(p->key);
    free(p);
}

static const rs_signer_ops pem_ops = {
    .sign_digest = pem_sign_digest,
    .matches = pem_matches,
    .destroy = pem_destroy,
};

static EVP_PKEY *decode_key(const rs_bytes *buf)
{
    _cleanup_(rs_biop) BIO *bio = BIO_new_mem_buf(buf->data, (int)buf->len);
    EVP_PKEY *key;
    const unsigned char *p = buf->data;

    if (!bio)
        return NULL;
    /* An empty passphrase callback: an encrypted key fails instead of
     * prompting on a terminal that may not exist. */
    key = PEM_read_bio_PrivateKey(bio, NULL, NULL, (void *)"");
    if (key)
        return key;
    ERR_clear_error();
    return d2i_AutoPrivateKey(NULL, &p, (long)buf->len);
}

/* A key that others on the machine can read may already have been copied.
 * Signing with it is still the operator's decision, so this only warns. */
static void warn_if_exposed(const char *path)
{
    struct stat st;

    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & (S_IRWXG | S_IRWXO)))
        fprintf(stderr, "reprosign: warning: %s: private key is accessible to group or others (mode %04o)\n",
                path, (unsigned)(st.st_mode & 07777));
}

int rs_signer_pem_open(const char *path, rs_signer **out, rs_error *err)
{
    _cleanup_bytes_ rs_bytes buf = { 0 };
    pem_signer *p;

    if (rs_read_file(path, MAX_KEY_FILE, &buf, err) < 0)
        return rs_error_prefix(err, "%s", path);
    warn_if_exposed(path);
    p = calloc(1, sizeof(*p));
    if (!p) {
        OPENSSL_cleanse(buf.data, buf.len);
        return rs_fail(err, "out of memory");
    }
    p->base.ops = &pem_ops;
    p->key = buf.len <= INT32_MAX ? decode_key(&buf) : NULL;
    OPENSSL_cleanse(buf.data, buf.len);
    if (!p->key) {
        free(p);
        return rs_fail_ssl(err, "%s: cannot read private key (PEM or DER, unencrypted)", path);
    }
    *out = &p->base;
    return 0;
}

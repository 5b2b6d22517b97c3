/* The file backend: a PEM (or DER) private key on disk. */
#include <errno.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/decoder.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/file.h"
#include "crypto/ossl.h"
#include "crypto/passphrase.h"
#include "crypto/signer.h"

#define MAX_KEY_FILE (1024 * 1024)

/* A signing context set up for one digest algorithm. Setting one up
 * fetches the provider's algorithms, which costs more than a quarter of
 * an RSA-2048 signature's time in OpenSSL 3 and takes a global lock, so
 * contexts are kept and reused: as many as threads have signed at once. */
typedef struct pem_ctx {
    EVP_PKEY_CTX *ctx;
    const EVP_MD *md;
    struct pem_ctx *next;
} pem_ctx;

typedef struct pem_signer {
    rs_signer base;
    EVP_PKEY *key;
    pthread_mutex_t lock;
    pem_ctx *idle;
} pem_signer;

static void pem_ctx_free(pem_ctx *c)
{
    if (c) {
        EVP_PKEY_CTX_free(c->ctx);
        free(c);
    }
}

DEFINE_POINTER_CLEANUP(pem_ctxp, pem_ctx, pem_ctx_free)

static pem_ctx *take_ctx(pem_signer *p)
{
    pem_ctx *c;

    pthread_mutex_lock(&p->lock);
    c = p->idle;
    if (c)
        p->idle = c->next;
    pthread_mutex_unlock(&p->lock);
    return c ? c : calloc(1, sizeof(*c));
}

static void put_ctx(pem_signer *p, pem_ctx *c)
{
    pthread_mutex_lock(&p->lock);
    c->next = p->idle;
    p->idle = c;
    pthread_mutex_unlock(&p->lock);
}

static int set_up(pem_signer *p, pem_ctx *c, const EVP_MD *md, rs_error *err)
{
    if (c->ctx && c->md == md)
        return 0;
    EVP_PKEY_CTX_free(c->ctx);
    c->md = NULL;
    c->ctx = EVP_PKEY_CTX_new_from_pkey(NULL, p->key, NULL);
    if (!c->ctx || EVP_PKEY_sign_init(c->ctx) <= 0 || EVP_PKEY_CTX_set_signature_md(c->ctx, md) <= 0)
        return rs_fail_ssl(err, "cannot set up signing");
    if (EVP_PKEY_is_a(p->key, "RSA") && EVP_PKEY_CTX_set_rsa_padding(c->ctx, RSA_PKCS1_PADDING) <= 0)
        return rs_fail_ssl(err, "cannot set up signing");
    c->md = md;
    return 0;
}

static int pem_sign_digest(rs_signer *s, const EVP_MD *md, const uint8_t *digest, size_t len, rs_bytes *sig,
                           rs_error *err)
{
    pem_signer *p = (pem_signer *)s;
    _cleanup_(pem_ctxp) pem_ctx *c = take_ctx(p);
    size_t siglen = 0;
    uint8_t *buf;

    if (!c)
        return rs_fail(err, "out of memory");
    if (set_up(p, c, md, err) < 0)
        return -1;
    if (EVP_PKEY_sign(c->ctx, NULL, &siglen, digest, len) <= 0)
        return rs_fail_ssl(err, "signing failed");
    buf = malloc(siglen);
    if (!buf)
        return rs_fail(err, "out of memory");
    if (EVP_PKEY_sign(c->ctx, buf, &siglen, digest, len) <= 0) {
        free(buf);
        return rs_fail_ssl(err, "signing failed");
    }
    rs_bytes_adopt(sig, buf, siglen);
    put_ctx(p, TAKE_PTR(c));   /* a context that failed is freed, not kept */
    return 0;
}

static bool pem_matches(rs_signer *s, EVP_PKEY *cert_key)
{
    return EVP_PKEY_eq(((pem_signer *)s)->key, cert_key) == 1;
}

static void pem_destroy(rs_signer *s)
{
    pem_signer *p = (pem_signer *)s;

    while (p->idle) {
        pem_ctx *c = p->idle;

        p->idle = c->next;
        pem_ctx_free(c);
    }
    pthread_mutex_destroy(&p->lock);
    EVP_PKEY_free(p->key);
    free(p);
}

static const rs_signer_ops pem_ops = {
    .sign_digest = pem_sign_digest,
    .matches = pem_matches,
    .destroy = pem_destroy,
};

DEFINE_POINTER_CLEANUP(rs_decoderp, OSSL_DECODER_CTX, OSSL_DECODER_CTX_free)
DEFINE_POINTER_CLEANUP(rs_algorp, X509_ALGOR, X509_ALGOR_free)

static void pem_block_free(char *name, char *header, unsigned char *der, long len)
{
    OPENSSL_free(name);
    OPENSSL_free(header);
    OPENSSL_clear_free(der, len > 0 ? (size_t)len : 0);
}

/* The algorithm OID of a PKCS#8 PrivateKeyInfo (SEQUENCE { INTEGER
 * version, AlgorithmIdentifier, OCTET STRING key }), read without making
 * a copy of the key itself. */
static bool pkcs8_algorithm(const unsigned char *der, long len, char *oid, size_t cap)
{
    const unsigned char *p = der, *end;
    _cleanup_(rs_algorp) X509_ALGOR *alg = NULL;
    const ASN1_OBJECT *obj;
    long inner;
    int tag, class;

    if ((ASN1_get_object(&p, &inner, &tag, &class, len) & 0x80) || tag != V_ASN1_SEQUENCE)
        return false;
    end = p + inner;
    if ((ASN1_get_object(&p, &inner, &tag, &class, end - p) & 0x80) || tag != V_ASN1_INTEGER)
        return false;
    p += inner;
    alg = d2i_X509_ALGOR(NULL, &p, end - p);
    if (!alg)
        return false;
    X509_ALGOR_get0(&obj, NULL, NULL, alg);
    int n = OBJ_obj2txt(oid, (int)cap, obj, 1);
    return n > 0 && (size_t)n < cap;
}

static EVP_PKEY *decode_der(const unsigned char *der, long len, const char *structure, const char *type)
{
    EVP_PKEY *key = NULL;
    _cleanup_(rs_decoderp) OSSL_DECODER_CTX *dctx =
        OSSL_DECODER_CTX_new_for_pkey(&key, "DER", structure, type, EVP_PKEY_KEYPAIR, NULL, NULL);
    size_t left = (size_t)len;

    if (!dctx || OSSL_DECODER_from_data(dctx, &der, &left) != 1) {
        EVP_PKEY_free(key);
        return NULL;
    }
    return key;
}

/* The key from the first PEM block labelled as a private key, when the
 * label (and for PKCS#8 the algorithm OID) names its type. OpenSSL 3's
 * generic reader builds a decoder chain for every key type and structure
 * before it looks at the bytes, which costs a per-file sign more than a
 * tenth of its run; naming the type up front skips that. *tried is false
 * when the block is not one of these, so the caller falls back. */
static EVP_PKEY *decode_named_pem(const rs_bytes *buf, bool *tried)
{
    _cleanup_(rs_biop) BIO *bio = BIO_new_mem_buf(buf->data, (int)buf->len);
    char *name = NULL, *header = NULL;
    unsigned char *der = NULL;
    EVP_PKEY *key = NULL;
    char oid[64];
    long len = 0;

    *tried = false;
    while (bio && PEM_read_bio(bio, &name, &header, &der, &len) == 1) {
        bool plain = header[0] == '\0';

        if (plain && strcmp(name, "PRIVATE KEY") == 0 && pkcs8_algorithm(der, len, oid, sizeof(oid))) {
            *tried = true;
            key = decode_der(der, len, "PrivateKeyInfo", oid);
        } else if (plain && strcmp(name, "RSA PRIVATE KEY") == 0) {
            *tried = true;
            key = decode_der(der, len, "type-specific", "RSA");
        } else if (plain && strcmp(name, "EC PRIVATE KEY") == 0) {
            *tried = true;
            key = decode_der(der, len, "type-specific", "EC");
        }
        bool other_key = strstr(name, "PRIVATE KEY") != NULL;
        pem_block_free(name, header, der, len);
        if (*tried || other_key)
            break;
    }
    ERR_clear_error();
    return key;
}

/* An encrypted key: PKCS#8's "ENCRYPTED PRIVATE KEY", or a traditional
 * PEM block with "Proc-Type: 4,ENCRYPTED". */
static bool is_encrypted(const rs_bytes *buf)
{
    return memmem(buf->data, buf->len, "-----BEGIN ENCRYPTED PRIVATE KEY-----", 37) ||
           memmem(buf->data, buf->len, "Proc-Type: 4,ENCRYPTED", 22);
}

/* OpenSSL's callback, handing over the passphrase asked for once. */
static int give_passphrase(char *buf, int size, int rwflag, void *u)
{
    const rs_p11_pin *pass = u;

    (void)rwflag;
    if (pass->len > (size_t)size)
        return -1;
    memcpy(buf, pass->value, pass->len);
    return (int)pass->len;
}

static EVP_PKEY *decode_encrypted(const rs_bytes *buf, const char *path, rs_error *err)
{
    _cleanup_(rs_biop) BIO *bio = BIO_new_mem_buf(buf->data, (int)buf->len);
    _cleanup_pin_ rs_p11_pin pass = { 0 };
    EVP_PKEY *key;

    if (!bio) {
        rs_fail(err, "out of memory");
        return NULL;
    }
    if (rs_passphrase_get(path, &pass, err) < 0) {
        rs_error_prefix(err, "%s", path);
        return NULL;
    }
    if (!(key = PEM_read_bio_PrivateKey(bio, NULL, give_passphrase, &pass)))
        rs_fail_ssl(err, "%s: cannot decrypt the private key (wrong passphrase?)", path);
    return key;
}

static EVP_PKEY *decode_key(const rs_bytes *buf, const char *path, rs_error *err)
{
    _cleanup_(rs_biop) BIO *bio = NULL;
    EVP_PKEY *key;
    const unsigned char *p = buf->data;
    bool tried;

    if (is_encrypted(buf))
        return decode_encrypted(buf, path, err);
    key = decode_named_pem(buf, &tried);
    if (key || tried)
        return key;
    if (!(bio = BIO_new_mem_buf(buf->data, (int)buf->len)))
        return NULL;
    /* Not encrypted (is_encrypted): an empty passphrase callback, so
     * nothing ever prompts here. */
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
    pthread_mutex_init(&p->lock, NULL);
    err->msg[0] = '\0';
    p->key = buf.len <= INT32_MAX ? decode_key(&buf, path, err) : NULL;
    OPENSSL_cleanse(buf.data, buf.len);
    if (!p->key) {
        pthread_mutex_destroy(&p->lock);
        free(p);
        return err->msg[0] ? -1 : rs_fail_ssl(err, "%s: cannot read private key (PEM, PKCS#8 or DER)", path);
    }
    *out = &p->base;
    return 0;
}

/* The file key backend reads every unencrypted key form OpenSSL writes
 * (PKCS#8 and traditional PEM, DER, a key after other PEM blocks) as the
 * same key, and refuses encrypted keys and garbage instead of prompting.
 * Its signing contexts, kept and reused, give correct signatures from
 * several threads at once and with the digest algorithm changing. */
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "crypto/ossl.h"
#include "crypto/signer.h"
#include "harness.h"

static char dir[] = "/tmp/reprosign-pem-XXXXXX";

typedef int (*writer)(BIO *bio, EVP_PKEY *key);

static int write_pkcs8(BIO *bio, EVP_PKEY *key)
{
    return PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL);
}

static int write_traditional(BIO *bio, EVP_PKEY *key)
{
    return PEM_write_bio_PrivateKey_traditional(bio, key, NULL, NULL, 0, NULL, NULL);
}

static int write_der(BIO *bio, EVP_PKEY *key)
{
    return i2d_PrivateKey_bio(bio, key);
}

/* A public key block first, as in a combined key file. */
static int write_after_other_block(BIO *bio, EVP_PKEY *key)
{
    return PEM_write_bio_PUBKEY(bio, key) && write_pkcs8(bio, key);
}

static int write_encrypted(BIO *bio, EVP_PKEY *key)
{
    return PEM_write_bio_PKCS8PrivateKey(bio, key, EVP_aes_256_cbc(), "secret", 6, NULL, NULL);
}

static int write_garbage(BIO *bio, EVP_PKEY *key)
{
    (void)key;
    return BIO_puts(bio, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n") > 0;
}

static bool save(const char *path, writer w, EVP_PKEY *key)
{
    _cleanup_(rs_biop) BIO *bio = BIO_new_file(path, "wb");

    return bio && w(bio, key) && chmod(path, 0600) == 0;
}

/* Opens the key written by w; true when it loads and equals `key`. */
static bool loads_as(const char *label, writer w, EVP_PKEY *key)
{
    char path[sizeof(dir) + 32];
    rs_signer *s = NULL;
    rs_error err;
    bool same;

    snprintf(path, sizeof(path), "%s/%s", dir, label);
    if (!save(path, w, key))
        return false;
    if (rs_signer_pem_open(path, &s, &err) < 0)
        return false;
    same = s->ops->matches(s, key);
    s->ops->destroy(s);
    unlink(path);
    return same;
}

/* traditional: whether the key type has an OpenSSL "traditional" PEM
 * form that keeps its type (RSA-PSS's would come back as plain RSA). */
static void check_key(const char *type, EVP_PKEY *key, bool traditional)
{
    char label[64];

    CHECK(key != NULL);
    if (!key)
        return;
    snprintf(label, sizeof(label), "%s-pkcs8", type);
    CHECK(loads_as(label, write_pkcs8, key));
    snprintf(label, sizeof(label), "%s-traditional", type);
    CHECK(!traditional || loads_as(label, write_traditional, key));
    snprintf(label, sizeof(label), "%s-der", type);
    CHECK(loads_as(label, write_der, key));
    snprintf(label, sizeof(label), "%s-combined", type);
    CHECK(loads_as(label, write_after_other_block, key));
    snprintf(label, sizeof(label), "%s-encrypted", type);
    CHECK(!loads_as(label, write_encrypted, key));
    snprintf(label, sizeof(label), "%s-garbage", type);
    CHECK(!loads_as(label, write_garbage, key));
}

static EVP_PKEY *rsa_pss_key(void)
{
    _cleanup_(rs_pkctxp) EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA-PSS", NULL);
    EVP_PKEY *key = NULL;

    if (!ctx || EVP_PKEY_keygen_init(ctx) <= 0 || EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, 2048) <= 0 ||
        EVP_PKEY_keygen(ctx, &key) <= 0)
        return NULL;
    return key;
}

typedef struct signing_thread {
    rs_signer *signer;
    EVP_PKEY *key;
    int seed;
    bool ok;
} signing_thread;

static bool verifies(EVP_PKEY *key, const EVP_MD *md, const uint8_t *digest, size_t len, const rs_bytes *sig)
{
    _cleanup_(rs_pkctxp) EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);

    return ctx && EVP_PKEY_verify_init(ctx) > 0 && EVP_PKEY_CTX_set_signature_md(ctx, md) > 0 &&
           (!EVP_PKEY_is_a(key, "RSA") || EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0) &&
           EVP_PKEY_verify(ctx, sig->data, sig->len, digest, len) == 1;
}

static void *sign_many(void *arg)
{
    signing_thread *t = arg;

    t->ok = true;
    for (int i = 0; i < 40; i++) {
        const EVP_MD *md = (i + t->seed) % 3 ? EVP_sha256() : EVP_sha384();
        uint8_t digest[48];
        _cleanup_bytes_ rs_bytes sig = { 0 };
        rs_error err;

        memset(digest, i * 7 + t->seed, sizeof(digest));
        if (t->signer->ops->sign_digest(t->signer, md, digest, (size_t)EVP_MD_get_size(md), &sig, &err) < 0 ||
            !verifies(t->key, md, digest, (size_t)EVP_MD_get_size(md), &sig))
            t->ok = false;
    }
    return NULL;
}

static void signs_from_threads(const char *label, EVP_PKEY *key)
{
    char path[sizeof(dir) + 32];
    rs_signer *s = NULL;
    rs_error err;
    signing_thread t[4];
    pthread_t th[4];

    snprintf(path, sizeof(path), "%s/%s", dir, label);
    CHECK(save(path, write_pkcs8, key) && rs_signer_pem_open(path, &s, &err) == 0);
    if (!s)
        return;
    for (int i = 0; i < 4; i++) {
        t[i] = (signing_thread){ .signer = s, .key = key, .seed = i };
        CHECK(pthread_create(&th[i], NULL, sign_many, &t[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK(t[i].ok);
    }
    s->ops->destroy(s);
    unlink(path);
}

int main(void)
{
    _cleanup_(rs_pkeyp) EVP_PKEY *rsa = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
    _cleanup_(rs_pkeyp) EVP_PKEY *ec = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    _cleanup_(rs_pkeyp) EVP_PKEY *pss = rsa_pss_key();

    if (!mkdtemp(dir))
        return 1;
    check_key("rsa", rsa, true);
    check_key("ec", ec, true);
    check_key("rsa-pss", pss, false);
    signs_from_threads("rsa-threads", rsa);
    signs_from_threads("ec-threads", ec);
    rmdir(dir);
    return harness_finish("signer_pem");
}

/* Signing digests on a SoftHSM2 token through the library: RSA signatures
 * equal the PEM key's byte for byte, ECDSA P-256/P-384 signatures verify
 * with the certificate, and several threads share one signer, each on a
 * session of its own from the pool (crypto/pkcs11_pool.h), or taking turns
 * on one when the token allows only one.
 * Exits 77 (skip) without SoftHSM2 and pkcs11-tool. */
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "crypto/ossl.h"
#include "crypto/pkcs11_pool.h"
#include "crypto/signer.h"
#include "harness.h"

#define MODULE "/usr/lib/softhsm/libsofthsm2.so"
#define THREADS 4
#define PER_THREAD 25

static char dir[] = "/tmp/reprosign-p11-XXXXXX";

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    _cleanup_free_ char *cmd = NULL;
    va_list ap;
    int r;

    va_start(ap, fmt);
    r = vasprintf(&cmd, fmt, ap);
    va_end(ap);
    return r < 0 ? -1 : system(cmd);
}

/* A token with an RSA-2048 key (id 01), a P-256 key (02), a P-384 key (03). */
static int make_token(void)
{
    static const char *const keys[] = { "rsa:2048", "ec -pkeyopt ec_paramgen_curve:P-256",
                                        "ec -pkeyopt ec_paramgen_curve:P-384" };

    if (!mkdtemp(dir) || sh("mkdir %s/t && printf 'directories.tokendir = %s/t\\nobjectstore.backend = file\\n'"
                            " >%s/conf", dir, dir, dir))
        return -1;
    char conf[sizeof(dir) + 8];

    snprintf(conf, sizeof(conf), "%s/conf", dir);
    setenv("SOFTHSM2_CONF", conf, 1);   /* setenv copies it */
    if (sh("softhsm2-util --init-token --free --label unit --pin 1234 --so-pin 5678 >/dev/null"))
        return -1;
    for (int i = 0; i < 3; i++)
        if (sh("cd %s && openssl req -new -x509 -newkey %s -nodes -subj /CN=k%d -keyout k%d.pem -out k%d.crt "
               "2>/dev/null && openssl pkey -in k%d.pem -outform DER -out k%d.der && pkcs11-tool --module %s "
               "--token-label unit --login --pin 1234 --write-object k%d.der --type privkey --id 0%d "
               "--label k%d >/dev/null 2>&1", dir, keys[i], i, i, i, i, i, MODULE, i, i + 1, i))
            return -1;
    return 0;
}

static int open_signer(int i, bool token, rs_signer **s, rs_error *err)
{
    _cleanup_free_ char *key = NULL, *cert = NULL;

    if ((token ? asprintf(&key, "pkcs11:token=unit;id=%%0%d?module-path=%s&pin-value=1234", i + 1, MODULE)
               : asprintf(&key, "%s/k%d.pem", dir, i)) < 0 ||
        asprintf(&cert, "%s/k%d.crt", dir, i) < 0)
        return -1;
    return rs_signer_open(key, cert, s, err);
}

static bool verifies(rs_signer *s, const EVP_MD *md, const uint8_t *digest, const rs_bytes *sig)
{
    _cleanup_(rs_pkctxp) EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, s->public_key, NULL);

    return ctx && EVP_PKEY_verify_init(ctx) > 0 && EVP_PKEY_CTX_set_signature_md(ctx, md) > 0 &&
           EVP_PKEY_verify(ctx, sig->data, sig->len, digest, (size_t)EVP_MD_get_size(md)) == 1;
}

/* Whether sig is what the PEM key gives for the same digest (RSA PKCS#1
 * v1.5 is deterministic); pem NULL: any signature that verifies. */
static bool as_pem(rs_signer *pem, const EVP_MD *md, const uint8_t *digest, const uint8_t *sig, size_t len)
{
    _cleanup_bytes_ rs_bytes want = { 0 };
    rs_error err;

    if (!pem)
        return true;
    return rs_signer_sign_digest(pem, md, digest, (size_t)EVP_MD_get_size(md), &want, &err) == 0 &&
           want.len == len && !memcmp(want.data, sig, len);
}

typedef struct job {
    rs_signer *s, *pem;
    const EVP_MD *md;
    rs_p11_pool *pool;  /* set: sign on the pool directly with key */
    CK_OBJECT_HANDLE key;
    int id, ok;
} job;

/* SHA-256 DigestInfo (RFC 8017, section 9.2, note 1) for CKM_RSA_PKCS. */
static CK_RV pool_sign(job *j, const uint8_t digest[32], uint8_t *sig, CK_ULONG *siglen)
{
    uint8_t info[51] = { 0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65,
                         0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20 };
    rs_bytes in = { .data = info, .len = sizeof(info) };

    memcpy(info + 19, digest, 32);
    return rs_p11_pool_sign(j->pool, CKM_RSA_PKCS, j->key, &in, sig, siglen);
}

static bool sign_one(job *j, const uint8_t *digest)
{
    _cleanup_bytes_ rs_bytes sig = { 0 };
    uint8_t raw[1024];
    CK_ULONG rawlen = sizeof(raw);
    rs_error err;

    if (j->pool)
        return pool_sign(j, digest, raw, &rawlen) == CKR_OK && as_pem(j->pem, j->md, digest, raw, rawlen);
    return rs_signer_sign_digest(j->s, j->md, digest, (size_t)EVP_MD_get_size(j->md), &sig, &err) == 0 &&
           verifies(j->s, j->md, digest, &sig) && as_pem(j->pem, j->md, digest, sig.data, sig.len);
}

static void *sign_some(void *arg)
{
    job *j = arg;

    for (int i = 0; i < PER_THREAD; i++) {
        uint8_t digest[EVP_MAX_MD_SIZE];
        int seed = j->id * 1000 + i;

        EVP_Digest(&seed, sizeof(seed), digest, NULL, j->md, NULL);
        if (sign_one(j, digest))
            j->ok++;
    }
    return NULL;
}

static void run_threads(job proto)
{
    pthread_t t[THREADS];
    job jobs[THREADS];

    for (int i = 0; i < THREADS; i++) {
        jobs[i] = proto;
        jobs[i].id = i;
        CHECK(pthread_create(&t[i], NULL, sign_some, &jobs[i]) == 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        CHECK(jobs[i].ok == PER_THREAD);
    }
}

/* The signer opens a session for each thread that signs while the others
 * do, never more than there are threads. */
static void test_threads(rs_signer *s, rs_signer *pem, const EVP_MD *md)
{
    run_threads((job){ .s = s, .pem = pem, .md = md });
    CHECK(rs_signer_pkcs11_sessions(s) >= 1 && rs_signer_pkcs11_sessions(s) <= THREADS);
}

static void test_rsa_equals_pem(void)
{
    _cleanup_(rs_signerp) rs_signer *tok = NULL, *pem = NULL;
    _cleanup_bytes_ rs_bytes a = { 0 }, b = { 0 };
    const EVP_MD *mds[] = { EVP_sha256(), EVP_sha384(), EVP_sha512() };
    uint8_t digest[64] = { 1, 2, 3 };
    rs_error err;

    CHECK(open_signer(0, true, &tok, &err) == 0 && open_signer(0, false, &pem, &err) == 0);
    if (!tok || !pem) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    for (size_t i = 0; i < 3; i++) {
        size_t len = (size_t)EVP_MD_get_size(mds[i]);

        CHECK(rs_signer_sign_digest(tok, mds[i], digest, len, &a, &err) == 0);
        CHECK(rs_signer_sign_digest(pem, mds[i], digest, len, &b, &err) == 0);
        CHECK(a.len == b.len && !memcmp(a.data, b.data, a.len));
        rs_bytes_free(&a);
        rs_bytes_free(&b);
    }
    test_threads(tok, pem, EVP_sha256());
}

static void test_ecdsa(int key, const EVP_MD *md)
{
    _cleanup_(rs_signerp) rs_signer *tok = NULL;
    rs_error err;

    CHECK(open_signer(key, true, &tok, &err) == 0);
    if (!tok) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    test_threads(tok, NULL, md);
}

static void test_pool_cap(void)
{
    CHECK(rs_p11_pool_cap(CK_EFFECTIVELY_INFINITE) == RS_P11_POOL_MAX);
    CHECK(rs_p11_pool_cap(CK_UNAVAILABLE_INFORMATION) == RS_P11_POOL_MAX);
    CHECK(rs_p11_pool_cap(1) == 1);
    CHECK(rs_p11_pool_cap(4) == 4);
    CHECK(rs_p11_pool_cap(RS_P11_POOL_MAX + 1) == RS_P11_POOL_MAX);
}

static int open_token(rs_p11_uri *u, rs_p11_token *t, CK_OBJECT_HANDLE *key, rs_error *err)
{
    if (rs_p11_uri_parse("pkcs11:token=unit;id=%01?module-path=" MODULE "&pin-value=1234", CKO_PRIVATE_KEY, u,
                         err) < 0 ||
        rs_p11_token_open(u, t, err) < 0 || rs_p11_token_login(t, u, err) < 0)
        return -1;
    return rs_p11_token_find(t, u, key, err);
}

/* A pool of at most cap sessions: as many distinct sessions as it may
 * open, the key found in the login session signing in every one of them
 * exactly as the PEM key does; with cap 1 (a token allowing one session)
 * the threads take turns on the login session. */
static void test_pool(size_t cap)
{
    _cleanup_p11_uri_ rs_p11_uri u = { 0 };
    _cleanup_p11_token_ rs_p11_token t = { 0 };
    _cleanup_(rs_signerp) rs_signer *pem = NULL;
    CK_SESSION_HANDLE held[THREADS];
    size_t want = cap < THREADS ? cap : THREADS;
    CK_OBJECT_HANDLE key;
    rs_p11_pool pool;
    rs_error err;

    if (open_token(&u, &t, &key, &err) < 0 || open_signer(0, false, &pem, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        CHECK(!"token opened");
        return;
    }
    rs_p11_pool_init(&pool, &t, cap);
    for (size_t i = 0; i < want; i++) {
        CHECK(rs_p11_pool_take(&pool, &held[i]) == CKR_OK);
        for (size_t k = 0; k < i; k++)
            CHECK(held[k] != held[i]);
    }
    for (size_t i = 0; i < want; i++)
        rs_p11_pool_give(&pool, held[i], false);
    CHECK(rs_p11_pool_sessions(&pool) == want);
    run_threads((job){ .pem = pem, .md = EVP_sha256(), .pool = &pool, .key = key });
    CHECK(rs_p11_pool_sessions(&pool) == want);
    rs_p11_pool_destroy(&pool);
}

int main(void)
{
    int r;

    if (access(MODULE, R_OK) || system("command -v softhsm2-util pkcs11-tool >/dev/null")) {
        return harness_skip("test_pkcs11_sign", "SoftHSM2 or pkcs11-tool is not installed");
    }
    if (make_token() < 0) {
        sh("rm -rf %s", dir);
        return harness_skip("test_pkcs11_sign", "cannot set up a SoftHSM2 token");
    }
    test_pool_cap();
    test_rsa_equals_pem();
    test_pool(THREADS);
    test_pool(1);
    test_ecdsa(1, EVP_sha256());
    test_ecdsa(2, EVP_sha384());
    r = harness_finish("test_pkcs11_sign");
    sh("rm -rf %s", dir);
    return r;
}

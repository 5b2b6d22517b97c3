/* Signing digests on a SoftHSM2 token through the library: RSA signatures
 * equal the PEM key's byte for byte, ECDSA P-256/P-384 signatures verify
 * with the certificate, and several threads can share one signer.
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

typedef struct job {
    rs_signer *s;
    const EVP_MD *md;
    int id, ok;
} job;

static void *sign_some(void *arg)
{
    job *j = arg;

    for (int i = 0; i < PER_THREAD; i++) {
        _cleanup_bytes_ rs_bytes sig = { 0 };
        uint8_t digest[EVP_MAX_MD_SIZE];
        int seed = j->id * 1000 + i;
        rs_error err;

        EVP_Digest(&seed, sizeof(seed), digest, NULL, j->md, NULL);
        if (rs_signer_sign_digest(j->s, j->md, digest, (size_t)EVP_MD_get_size(j->md), &sig, &err) == 0 &&
            verifies(j->s, j->md, digest, &sig))
            j->ok++;
    }
    return NULL;
}

static void test_threads(rs_signer *s, const EVP_MD *md)
{
    pthread_t t[THREADS];
    job jobs[THREADS];

    for (int i = 0; i < THREADS; i++) {
        jobs[i] = (job){ .s = s, .md = md, .id = i };
        CHECK(pthread_create(&t[i], NULL, sign_some, &jobs[i]) == 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        CHECK(jobs[i].ok == PER_THREAD);
    }
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
    test_threads(tok, EVP_sha256());
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
    test_threads(tok, md);
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
    test_rsa_equals_pem();
    test_ecdsa(1, EVP_sha256());
    test_ecdsa(2, EVP_sha384());
    r = harness_finish("test_pkcs11_sign");
    sh("rm -rf %s", dir);
    return r;
}

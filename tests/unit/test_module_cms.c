/* A module's CMS is built once per thread for a certificate and digest,
 * and only the signature changes from one module to the next. Whatever a
 * thread signed before, each CMS it assembles must be byte for byte the
 * one a fresh thread builds for the same certificate, digest, signer
 * identifier and signature: the digest algorithm, the certificate (its
 * issuer and serial) and the identifier by subjectKeyIdentifier all
 * change here between one signature and the next. */
#include <openssl/evp.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "formats/module/module_cms.h"
#include "harness.h"

typedef struct step {
    X509 *cert;
    const EVP_MD *md;
    bool use_key_id;
    unsigned char fill;   /* the signature's bytes */
    rs_bytes der;
} step;

static X509 *make_cert(EVP_PKEY *key, const char *cn, long serial)
{
    X509 *cert = X509_new();
    X509_NAME *name = X509_NAME_new();
    ASN1_OCTET_STRING *skid = ASN1_OCTET_STRING_new();
    unsigned char id[20];

    memset(id, (int)serial, sizeof(id));
    if (!cert || !name || !skid ||
        !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0) ||
        !X509_set_version(cert, 2) || !ASN1_INTEGER_set(X509_get_serialNumber(cert), serial) ||
        !X509_set_subject_name(cert, name) || !X509_set_issuer_name(cert, name) ||
        !X509_gmtime_adj(X509_getm_notBefore(cert), 0) || !X509_gmtime_adj(X509_getm_notAfter(cert), 86400) ||
        !X509_set_pubkey(cert, key) || !ASN1_OCTET_STRING_set(skid, id, sizeof(id)) ||
        !X509_add1_ext_i2d(cert, NID_subject_key_identifier, skid, 0, 0) || !X509_sign(cert, key, EVP_sha256()))
        abort();
    ASN1_OCTET_STRING_free(skid);
    X509_NAME_free(name);
    return cert;
}

static void assemble(step *s)
{
    rs_digest d = { .md = s->md, .len = (unsigned)EVP_MD_get_size(s->md) };
    unsigned char bytes[256];
    rs_bytes sig = { .data = bytes, .len = sizeof(bytes) };
    rs_error err;

    memset(d.bytes, s->fill, d.len);
    memset(bytes, s->fill, sizeof(bytes));
    if (module_cms_assemble(&d, &sig, s->cert, s->use_key_id, &s->der, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        s->der = (rs_bytes){ 0 };
    }
}

static void *assemble_in_thread(void *arg)
{
    assemble(arg);
    return NULL;
}

int main(void)
{
    EVP_PKEY *key = EVP_RSA_gen(2048);
    X509 *a, *b;

    if (!key)
        abort();
    a = make_cert(key, "module signing A", 1);
    b = make_cert(key, "module signing B", 2);
    step steps[] = {
        { a, EVP_sha256(), false, 1, { 0 } }, { a, EVP_sha256(), false, 2, { 0 } }, { a, EVP_sha512(), false, 3, { 0 } },
        { b, EVP_sha512(), false, 4, { 0 } }, { b, EVP_sha512(), true, 5, { 0 } },   { a, EVP_sha512(), true, 6, { 0 } },
        { a, EVP_sha256(), false, 7, { 0 } },
    };
    size_t n = sizeof(steps) / sizeof(steps[0]);

    for (size_t i = 0; i < n; i++) {
        step fresh = steps[i];
        pthread_t t;

        assemble(&steps[i]);
        fresh.der = (rs_bytes){ 0 };
        if (pthread_create(&t, NULL, assemble_in_thread, &fresh) != 0 || pthread_join(t, NULL) != 0)
            abort();
        CHECK(steps[i].der.len > 0);
        CHECK(steps[i].der.len == fresh.der.len && !memcmp(steps[i].der.data, fresh.der.data, fresh.der.len));
        if (i > 0)
            CHECK(steps[i].der.len != steps[i - 1].der.len ||
                  memcmp(steps[i].der.data, steps[i - 1].der.data, steps[i].der.len) != 0);
        rs_bytes_free(&fresh.der);
    }
    for (size_t i = 0; i < n; i++)
        rs_bytes_free(&steps[i].der);
    X509_free(a);
    X509_free(b);
    EVP_PKEY_free(key);
    return harness_finish("test_module_cms");
}

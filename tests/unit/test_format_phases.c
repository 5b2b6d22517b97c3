/* The two signing phases of every format: to_be_signed, a signature made
 * outside reprosign (OpenSSL with the key file), then assemble, gives the
 * same DER byte for byte as sign_digest with the key; Authenticode's bytes
 * to be signed are exactly the signed attributes in that DER, a module's
 * are the digest; assemble refuses bytes made for another digest, and a
 * module key named by subjectKeyIdentifier needs one before anything is
 * signed. */
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypto/ossl.h"
#include "formats/format.h"
#include "harness.h"

static EVP_PKEY *key;
static rs_signer *signer;

static void set_up(char *dir)
{
    char key_path[96], cert_path[96];
    rs_error err;
    FILE *f;

    if (!mkdtemp(dir))
        abort();
    snprintf(key_path, sizeof(key_path), "%s/key.pem", dir);
    snprintf(cert_path, sizeof(cert_path), "%s/cert.pem", dir);
    harness_make_key(key_path, cert_path);
    if (!(f = fopen(key_path, "r")) || !(key = PEM_read_PrivateKey(f, NULL, NULL, NULL)))
        abort();
    fclose(f);
    if (rs_signer_open(key_path, cert_path, &signer, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        abort();
    }
    unlink(key_path);
    unlink(cert_path);
    rmdir(dir);
}

static rs_digest digest_of(const char *text, const EVP_MD *md)
{
    rs_digest d = { .md = md };

    EVP_Digest(text, strlen(text), d.bytes, &d.len, md, NULL);
    return d;
}

/* PKCS#1 v1.5 over the digest rs_tbs_digest names, by OpenSSL alone. */
static int external_sign(const rs_format *f, const rs_bytes *tbs, const EVP_MD *md, rs_bytes *sig)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(key, NULL);
    rs_digest d = { .md = md };
    size_t len = 0;
    int ok;

    if (f->key_signs_image_digest) {
        memcpy(d.bytes, tbs->data, tbs->len);
        d.len = (unsigned)tbs->len;
    } else {
        EVP_Digest(tbs->data, tbs->len, d.bytes, &d.len, md, NULL);
    }
    ok = ctx && EVP_PKEY_sign_init(ctx) > 0 && EVP_PKEY_CTX_set_signature_md(ctx, md) > 0 &&
         EVP_PKEY_sign(ctx, NULL, &len, d.bytes, d.len) > 0 && (sig->data = malloc(len)) &&
         EVP_PKEY_sign(ctx, sig->data, &len, d.bytes, d.len) > 0;
    sig->len = len;
    EVP_PKEY_CTX_free(ctx);
    return ok ? 0 : -1;
}

static bool same(const rs_bytes *a, const rs_bytes *b)
{
    return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

/* The signed attributes as they stand in an Authenticode signature. */
static bool attributes_are(const rs_bytes *der, const rs_bytes *tbs)
{
    const unsigned char *p = der->data;
    PKCS7 *p7 = d2i_PKCS7(NULL, &p, (long)der->len);
    PKCS7_SIGNER_INFO *si = p7 ? sk_PKCS7_SIGNER_INFO_value(PKCS7_get_signer_info(p7), 0) : NULL;
    unsigned char *attrs = NULL;
    int len = si ? ASN1_item_i2d((ASN1_VALUE *)si->auth_attr, &attrs, ASN1_ITEM_rptr(PKCS7_ATTR_SIGN)) : -1;
    bool ok = len > 0 && (size_t)len == tbs->len && memcmp(attrs, tbs->data, tbs->len) == 0;

    OPENSSL_free(attrs);
    PKCS7_free(p7);
    return ok;
}

static void phases_equal_sign_digest(const rs_format *f, const rs_sign_options *opts)
{
    rs_digest d = digest_of(f->name, opts->md), other = digest_of("another image", opts->md);
    rs_bytes whole = { 0 }, tbs = { 0 }, sig = { 0 }, assembled = { 0 }, refused = { 0 };
    rs_error err;

    CHECK(rs_format_sign_digest(f, &d, signer, opts, &whole, &err) == 0);
    CHECK(f->to_be_signed(&d, signer->cert, opts, &tbs, &err) == 0);
    CHECK(external_sign(f, &tbs, opts->md, &sig) == 0);
    CHECK(f->assemble(&d, &tbs, &sig, signer->cert, signer->chain, opts, &assembled, &err) == 0);
    CHECK(same(&whole, &assembled));
    if (f->key_signs_image_digest)
        CHECK(tbs.len == d.len && memcmp(tbs.data, d.bytes, d.len) == 0);
    else
        CHECK(attributes_are(&whole, &tbs));
    CHECK(f->assemble(&other, &tbs, &sig, signer->cert, signer->chain, opts, &refused, &err) < 0);
    CHECK(refused.len == 0);
    rs_bytes_free(&whole);
    rs_bytes_free(&tbs);
    rs_bytes_free(&sig);
    rs_bytes_free(&assembled);
}

static void module_key_id_needs_ski(void)
{
    rs_sign_options opts = { .md = EVP_sha256(), .use_key_id = true };
    rs_digest d = digest_of("module", opts.md);
    rs_bytes tbs = { 0 };
    rs_error err;

    CHECK(rs_format_module.to_be_signed(&d, signer->cert, &opts, &tbs, &err) < 0);
    CHECK(strstr(err.msg, "subjectKeyIdentifier") != NULL);
    CHECK(tbs.len == 0);
}

int main(void)
{
    char dir[] = "/tmp/rs-phases-XXXXXX";
    const rs_sign_options plain = { .md = EVP_sha256() },
                          timed = { .md = EVP_sha384(), .signing_time = true, .time = 1700000000 };

    set_up(dir);
    phases_equal_sign_digest(&rs_format_pe, &plain);
    phases_equal_sign_digest(&rs_format_pe, &timed);
    phases_equal_sign_digest(&rs_format_module, &plain);
    phases_equal_sign_digest(&rs_format_module, &timed);
    module_key_id_needs_ski();
    rs_signer_free(signer);
    EVP_PKEY_free(key);
    return harness_finish("test_format_phases");
}

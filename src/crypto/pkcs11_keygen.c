#include "crypto/pkcs11_keygen.h"

#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "crypto/ossl.h"
#include "crypto/p11kit_lib.h"

static CK_BBOOL yes = CK_TRUE, no = CK_FALSE;

static int reopen_read_write(rs_p11_keygen *k, rs_error *err)
{
    rs_p11_token *t = &k->token;
    CK_RV rv;

    t->slot.module->C_CloseSession(t->session);
    t->open = false;
    rv = t->slot.module->C_OpenSession(t->slot.id, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &t->session);
    if (rv != CKR_OK)
        return rs_fail(err, "%s: token '%s': cannot open a read-write session: %s", k->uri.display, t->slot.label,
                       sym_p11_kit_strerror(rv));
    t->open = true;
    return 0;
}

int rs_p11_keygen_open(const char *spec, rs_p11_keygen *k, rs_error *err)
{
    *k = (rs_p11_keygen){ 0 };
    if (!(k->spec = strdup(spec)))
        return rs_fail(err, "out of memory");
    if (rs_p11_uri_parse(spec, CKO_PRIVATE_KEY, &k->uri, err) < 0)
        return -1;
    if (sym_p11_kit_uri_get_attribute(k->uri.uri, CKA_LABEL) || sym_p11_kit_uri_get_attribute(k->uri.uri, CKA_ID))
        return rs_fail(err, "%s: names an object; name only the token (the keys are labelled PK, KEK and db)",
                       k->uri.display);
    if (rs_p11_token_open(&k->uri, &k->token, err) < 0 || reopen_read_write(k, err) < 0 ||
        rs_p11_token_login(&k->token, &k->uri, err) < 0)
        return -1;
    return 0;
}

static int refuse_used_label(rs_p11_keygen *k, const char *label, rs_error *err)
{
    CK_ATTRIBUTE tmpl[] = { { CKA_LABEL, (void *)label, strlen(label) } };
    CK_OBJECT_HANDLE found;
    CK_ULONG count;

    if (rs_p11_token_search(&k->token, tmpl, 1, &found, 1, &count, err) < 0)
        return -1;
    if (count)
        return rs_fail(err, "%s: token '%s' already has an object labelled '%s'; keys are never overwritten",
                       k->uri.display, k->token.slot.label, label);
    return 0;
}

static int public_key(rs_p11_keygen *k, CK_OBJECT_HANDLE pub, EVP_PKEY **out, rs_error *err)
{
    _cleanup_bytes_ rs_bytes n = { 0 }, e = { 0 };
    OSSL_PARAM_BLD *bld = NULL;
    OSSL_PARAM *params = NULL;
    BIGNUM *bn_n = NULL, *bn_e = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    int ok = 0;

    if (rs_p11_token_attr(&k->token, pub, CKA_MODULUS, &n, err) < 0 ||
        rs_p11_token_attr(&k->token, pub, CKA_PUBLIC_EXPONENT, &e, err) < 0)
        return -1;
    bn_n = BN_bin2bn(n.data, (int)n.len, NULL);
    bn_e = BN_bin2bn(e.data, (int)e.len, NULL);
    if (bn_n && bn_e && (bld = OSSL_PARAM_BLD_new()) && OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn_n) &&
        OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, bn_e) && (params = OSSL_PARAM_BLD_to_param(bld)) &&
        (ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL)) && EVP_PKEY_fromdata_init(ctx) > 0)
        ok = EVP_PKEY_fromdata(ctx, out, EVP_PKEY_PUBLIC_KEY, params) > 0;
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_free(bn_n);
    BN_free(bn_e);
    return ok ? 0 : rs_fail_ssl(err, "token '%s': cannot read the new public key", k->token.slot.label);
}

/* The private key's URI: the token's, with the key's label. */
static int key_uri(rs_p11_keygen *k, rs_p11_new_key *key, rs_error *err)
{
    const char *query = strchr(k->spec, '?');
    int path_len = (int)(query ? (size_t)(query - k->spec) : strlen(k->spec));
    const char *sep = k->spec[path_len - 1] == ':' ? "" : ";";

    if (asprintf(&key->uri, "%.*s%sobject=%s;type=private%s", path_len, k->spec, sep, key->label,
                 query ? query : "") < 0)
        return rs_fail(err, "out of memory");
    return 0;
}

int rs_p11_keygen_rsa(rs_p11_keygen *k, const char *label, int bits, rs_p11_new_key *out, rs_error *err)
{
    CK_MECHANISM mech = { CKM_RSA_PKCS_KEY_PAIR_GEN, NULL, 0 };
    CK_ULONG modulus_bits = (CK_ULONG)bits;
    CK_BYTE exponent[] = { 1, 0, 1 };
    CK_OBJECT_HANDLE pub, priv;
    CK_RV rv;

    *out = (rs_p11_new_key){ 0 };
    snprintf(out->label, sizeof(out->label), "%s", label);
    if (k->n_made + 3 > RS_P11_KEYGEN_MAX_OBJECTS || RAND_bytes(out->id, sizeof(out->id)) != 1)
        return rs_fail(err, "cannot make another key");
    CK_ATTRIBUTE pub_tmpl[] = {
        { CKA_TOKEN, &yes, sizeof(yes) },           { CKA_VERIFY, &yes, sizeof(yes) },
        { CKA_ENCRYPT, &no, sizeof(no) },           { CKA_WRAP, &no, sizeof(no) },
        { CKA_MODULUS_BITS, &modulus_bits, sizeof(modulus_bits) },
        { CKA_PUBLIC_EXPONENT, exponent, sizeof(exponent) },
        { CKA_LABEL, out->label, strlen(out->label) }, { CKA_ID, out->id, sizeof(out->id) },
    };
    CK_ATTRIBUTE priv_tmpl[] = {
        { CKA_TOKEN, &yes, sizeof(yes) },     { CKA_PRIVATE, &yes, sizeof(yes) },
        { CKA_SENSITIVE, &yes, sizeof(yes) }, { CKA_EXTRACTABLE, &no, sizeof(no) },
        { CKA_SIGN, &yes, sizeof(yes) },      { CKA_DECRYPT, &no, sizeof(no) },
        { CKA_UNWRAP, &no, sizeof(no) },      { CKA_LABEL, out->label, strlen(out->label) },
        { CKA_ID, out->id, sizeof(out->id) },
    };
    if (refuse_used_label(k, label, err) < 0)
        return -1;
    rv = k->token.slot.module->C_GenerateKeyPair(k->token.session, &mech, pub_tmpl, sizeof(pub_tmpl) / sizeof(pub_tmpl[0]),
                                                priv_tmpl, sizeof(priv_tmpl) / sizeof(priv_tmpl[0]), &pub, &priv);
    if (rv != CKR_OK)
        return rs_fail(err, "%s: token '%s': cannot generate an RSA-%d key pair: %s", k->uri.display,
                       k->token.slot.label, bits, sym_p11_kit_strerror(rv));
    k->made[k->n_made++] = pub;
    k->made[k->n_made++] = priv;
    if (public_key(k, pub, &out->public_key, err) < 0 || key_uri(k, out, err) < 0)
        return -1;
    return 0;
}

int rs_p11_keygen_store_cert(rs_p11_keygen *k, const rs_p11_new_key *key, X509 *cert, rs_error *err)
{
    unsigned char *der = NULL, *subject = NULL;
    CK_OBJECT_CLASS class = CKO_CERTIFICATE;
    CK_CERTIFICATE_TYPE type = CKC_X_509;
    CK_OBJECT_HANDLE obj;
    int der_len = i2d_X509(cert, &der), subject_len = i2d_X509_NAME(X509_get_subject_name(cert), &subject);
    CK_RV rv;

    if (der_len <= 0 || subject_len <= 0 || k->n_made == RS_P11_KEYGEN_MAX_OBJECTS) {
        OPENSSL_free(der);
        OPENSSL_free(subject);
        return rs_fail_ssl(err, "cannot encode the certificate");
    }
    CK_ATTRIBUTE tmpl[] = {
        { CKA_CLASS, &class, sizeof(class) },           { CKA_CERTIFICATE_TYPE, &type, sizeof(type) },
        { CKA_TOKEN, &yes, sizeof(yes) },               { CKA_LABEL, (void *)key->label, strlen(key->label) },
        { CKA_ID, (void *)key->id, sizeof(key->id) },  { CKA_SUBJECT, subject, (CK_ULONG)subject_len },
        { CKA_VALUE, der, (CK_ULONG)der_len },
    };
    rv = k->token.slot.module->C_CreateObject(k->token.session, tmpl, 7, &obj);
    OPENSSL_free(der);
    OPENSSL_free(subject);
    if (rv != CKR_OK)
        return rs_fail(err, "%s: token '%s': cannot store the certificate for '%s': %s", k->uri.display,
                       k->token.slot.label, key->label, sym_p11_kit_strerror(rv));
    k->made[k->n_made++] = obj;
    return 0;
}

void rs_p11_keygen_close(rs_p11_keygen *k)
{
    for (size_t i = 0; k->token.open && !k->keep && i < k->n_made; i++)
        k->token.slot.module->C_DestroyObject(k->token.session, k->made[i]);
    rs_p11_token_close(&k->token);
    rs_p11_uri_free(&k->uri);
    free(k->spec);
    *k = (rs_p11_keygen){ 0 };
}

void rs_p11_new_key_free(rs_p11_new_key *key)
{
    EVP_PKEY_free(key->public_key);
    free(key->uri);
    *key = (rs_p11_new_key){ 0 };
}

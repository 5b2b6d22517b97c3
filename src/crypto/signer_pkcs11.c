/* The PKCS#11 backend: the key stays on the token, digests go in and
 * signatures come out. One login; each signing thread borrows a session of
 * its own from a pool (crypto/pkcs11_pool.h). */
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/objects.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/ossl.h"
#include "crypto/p11kit_lib.h"
#include "crypto/pkcs11_pool.h"
#include "crypto/pkcs11_token.h"
#include "crypto/pkcs11_uri.h"
#include "crypto/signer.h"

typedef struct p11_signer {
    rs_signer base;
    rs_p11_token token;
    CK_OBJECT_HANDLE key;
    CK_MECHANISM_TYPE mechanism;
    rs_p11_pool sessions;  /* set up once the key is found */
    bool pooled;
} p11_signer;

DEFINE_POINTER_CLEANUP(rs_x509_sigp, X509_SIG, X509_SIG_free)
DEFINE_POINTER_CLEANUP(rs_ecdsa_sigp, ECDSA_SIG, ECDSA_SIG_free)

static int der_to_bytes(unsigned char *der, int len, rs_bytes *out, rs_error *err)
{
    int r;

    if (len <= 0)
        return rs_fail_ssl(err, "cannot encode");
    r = rs_bytes_set(out, der, (size_t)len, err);
    OPENSSL_free(der);
    return r;
}

/* CKM_RSA_PKCS pads whatever it is given, so the DigestInfo that RSA
 * PKCS#1 v1.5 signs (the same one OpenSSL builds for a file key) is built
 * here. */
static int digest_info(const EVP_MD *md, const uint8_t *digest, size_t len, rs_bytes *out, rs_error *err)
{
    _cleanup_(rs_x509_sigp) X509_SIG *sig = X509_SIG_new();
    X509_ALGOR *alg;
    ASN1_OCTET_STRING *value;
    unsigned char *der = NULL;

    if (!sig)
        return rs_fail(err, "out of memory");
    X509_SIG_getm(sig, &alg, &value);
    if (!X509_ALGOR_set0(alg, OBJ_nid2obj(EVP_MD_get_type(md)), V_ASN1_NULL, NULL) ||
        !ASN1_OCTET_STRING_set(value, digest, (int)len))
        return rs_fail_ssl(err, "cannot build DigestInfo");
    return der_to_bytes(der, i2d_X509_SIG(sig, &der), out, err);
}

/* CKM_ECDSA returns r || s, each as wide as the group order; signatures in
 * CMS and PKCS#7 are DER ECDSA-Sig-Value. */
static int ecdsa_to_der(const uint8_t *raw, size_t len, rs_bytes *out, rs_error *err)
{
    _cleanup_(rs_ecdsa_sigp) ECDSA_SIG *sig = ECDSA_SIG_new();
    BIGNUM *r, *s;
    unsigned char *der = NULL;

    if (len == 0 || len % 2)
        return rs_fail(err, "the token returned a malformed ECDSA signature (%zu bytes)", len);
    if (!sig)
        return rs_fail(err, "out of memory");
    r = BN_bin2bn(raw, (int)(len / 2), NULL);
    s = BN_bin2bn(raw + len / 2, (int)(len / 2), NULL);
    if (!r || !s || !ECDSA_SIG_set0(sig, r, s)) {
        BN_free(r);
        BN_free(s);
        return rs_fail_ssl(err, "cannot convert the ECDSA signature");
    }
    return der_to_bytes(der, i2d_ECDSA_SIG(sig, &der), out, err);
}

/* Big enough for RSA-16384 and for r || s of any curve, so C_Sign never
 * reports CKR_BUFFER_TOO_SMALL, which would leave the operation active. */
#define MAX_RAW_SIGNATURE 2048

static int p11_sign_digest(rs_signer *s, const EVP_MD *md, const uint8_t *digest, size_t len, rs_bytes *sig,
                           rs_error *err)
{
    p11_signer *p = (p11_signer *)s;
    _cleanup_bytes_ rs_bytes in = { 0 };
    uint8_t raw[MAX_RAW_SIGNATURE];
    CK_ULONG rawlen = sizeof(raw);
    CK_RV rv;

    if (!s->public_key || !EVP_PKEY_is_a(s->public_key, p->mechanism == CKM_RSA_PKCS ? "RSA" : "EC"))
        return rs_fail(err, "the private key (%s) does not match the certificate's",
                       p->mechanism == CKM_RSA_PKCS ? "RSA" : "EC");
    if (p->mechanism == CKM_RSA_PKCS ? digest_info(md, digest, len, &in, err) < 0
                                     : rs_bytes_set(&in, digest, len, err) < 0)
        return -1;
    rv = rs_p11_pool_sign(&p->sessions, p->mechanism, p->key, &in, raw, &rawlen);
    if (rv != CKR_OK)
        /* An unplugged or wedged token may come back: try again later. */
        return rs_fail_transient(err, RS_TRANSIENT_TOKEN, "token '%s': signing failed: %s", p->token.slot.label,
                                 sym_p11_kit_strerror(rv));
    if (p->mechanism == CKM_ECDSA)
        return ecdsa_to_der(raw, rawlen, sig, err);
    return rs_bytes_set(sig, raw, rawlen, err);
}

static void p11_destroy(rs_signer *s)
{
    p11_signer *p = (p11_signer *)s;

    if (p->pooled)
        rs_p11_pool_destroy(&p->sessions);
    rs_p11_token_close(&p->token);
    free(p);
}

static const rs_signer_ops p11_ops = {
    .sign_digest = p11_sign_digest,
    .destroy = p11_destroy,
};

size_t rs_signer_pkcs11_sessions(rs_signer *s)
{
    p11_signer *p = s && s->ops == &p11_ops ? (p11_signer *)s : NULL;

    return p && p->pooled ? rs_p11_pool_sessions(&p->sessions) : 0;
}

static bool attr_true(p11_signer *p, CK_ATTRIBUTE_TYPE type)
{
    _cleanup_bytes_ rs_bytes v = { 0 };
    rs_error ignored;

    return rs_p11_token_attr(&p->token, p->key, type, &v, &ignored) == 0 && v.len == 1 && v.data[0] == CK_TRUE;
}

static int pick_mechanism(p11_signer *p, const rs_p11_uri *u, rs_error *err)
{
    _cleanup_bytes_ rs_bytes type = { 0 };
    CK_KEY_TYPE kt = (CK_KEY_TYPE)-1;
    CK_MECHANISM_INFO info;

    if (rs_p11_token_attr(&p->token, p->key, CKA_KEY_TYPE, &type, err) < 0)
        return rs_error_prefix(err, "%s", u->display);
    if (type.len == sizeof(kt))
        memcpy(&kt, type.data, sizeof(kt));
    if (kt != CKK_RSA && kt != CKK_EC)
        return rs_fail(err, "%s: the key is neither RSA nor EC (key type 0x%lx)", u->display, (unsigned long)kt);
    /* Such a key wants the PIN again for every signature; thousands of
     * prompts are no way to sign a kernel's modules. */
    if (attr_true(p, CKA_ALWAYS_AUTHENTICATE))
        return rs_fail(err, "%s: the key requires a PIN for each signature (CKA_ALWAYS_AUTHENTICATE), "
                            "which is not supported", u->display);
    p->mechanism = kt == CKK_RSA ? CKM_RSA_PKCS : CKM_ECDSA;
    if (p->token.slot.module->C_GetMechanismInfo(p->token.slot.id, p->mechanism, &info) != CKR_OK ||
        !(info.flags & CKF_SIGN))
        return rs_fail(err, "%s: token '%s' cannot sign with %s", u->display, p->token.slot.label,
                       kt == CKK_RSA ? "CKM_RSA_PKCS" : "CKM_ECDSA");
    return 0;
}

int rs_signer_pkcs11_open(const char *spec, rs_signer **out, rs_error *err)
{
    _cleanup_p11_uri_ rs_p11_uri u = { 0 };
    _cleanup_(rs_signerp) rs_signer *s = NULL;
    p11_signer *p;

    if (rs_p11_uri_parse(spec, CKO_PRIVATE_KEY, &u, err) < 0)
        return -1;
    p = calloc(1, sizeof(*p));
    if (!p)
        return rs_fail(err, "out of memory");
    p->base.ops = &p11_ops;
    s = &p->base;
    if (rs_p11_token_open(&u, &p->token, err) < 0 || rs_p11_token_login(&p->token, &u, err) < 0 ||
        rs_p11_token_find(&p->token, &u, &p->key, err) < 0 || pick_mechanism(p, &u, err) < 0)
        return -1;
    rs_p11_pool_init(&p->sessions, &p->token, rs_p11_pool_cap(p->token.slot.token.ulMaxSessionCount));
    p->pooled = true;
    *out = TAKE_PTR(s);
    return 0;
}

static int read_cert(rs_p11_token *t, const rs_p11_uri *u, X509 **out, rs_error *err)
{
    _cleanup_bytes_ rs_bytes der = { 0 };
    CK_OBJECT_HANDLE obj;
    const unsigned char *p;

    if (rs_p11_token_find(t, u, &obj, err) < 0)
        return -1;
    if (rs_p11_token_attr(t, obj, CKA_VALUE, &der, err) < 0)
        return rs_error_prefix(err, "%s", u->display);
    p = der.data;
    *out = der.len <= INT32_MAX ? d2i_X509(NULL, &p, (long)der.len) : NULL;
    if (!*out || p != der.data + der.len) {
        X509_free(*out);
        *out = NULL;
        return rs_fail_ssl(err, "%s: the object is not a DER X.509 certificate", u->display);
    }
    return 0;
}

int rs_signer_pkcs11_cert(const char *spec, rs_signer *key, X509 **out, rs_error *err)
{
    _cleanup_p11_uri_ rs_p11_uri u = { 0 };
    _cleanup_p11_token_ rs_p11_token own = { 0 };
    p11_signer *p = key && key->ops == &p11_ops ? (p11_signer *)key : NULL;
    int r;

    if (rs_p11_uri_parse(spec, CKO_CERTIFICATE, &u, err) < 0)
        return -1;
    /* The key's session is logged in already, so a certificate next to it
     * is found even if private, without a second login. */
    if (p && rs_p11_token_is(&p->token, &u)) {
        rs_p11_token view = p->token;  /* the same token on a borrowed session; never closed */
        CK_RV rv = rs_p11_pool_take(&p->sessions, &view.session);

        if (rv != CKR_OK)
            return rs_fail(err, "%s: token '%s': no session: %s", u.display, p->token.slot.label,
                           sym_p11_kit_strerror(rv));
        r = read_cert(&view, &u, out, err);
        rs_p11_pool_give(&p->sessions, view.session, false);
        return r;
    }
    if (rs_p11_token_open(&u, &own, err) < 0)
        return -1;
    return read_cert(&own, &u, out, err);
}

#include "crypto/cert_sign.h"

#include <openssl/objects.h>

#include "base/cleanup.h"

/* RSA's AlgorithmIdentifier carries NULL parameters; ECDSA's none. */
static int set_algorithm(X509_ALGOR *alg, int sig_nid, int key_nid)
{
    return X509_ALGOR_set0(alg, OBJ_nid2obj(sig_nid), key_nid == EVP_PKEY_RSA ? V_ASN1_NULL : V_ASN1_UNDEF, NULL);
}

int rs_x509_sign_with(X509 *cert, rs_signer *s, const EVP_MD *md, rs_error *err)
{
    _cleanup_bytes_ rs_bytes sig = { 0 };
    unsigned char *tbs = NULL;
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_len = 0;
    const ASN1_BIT_STRING *value;
    const X509_ALGOR *outer;
    ASN1_BIT_STRING *signature;
    int sig_nid, key_nid = EVP_PKEY_get_base_id(s->public_key), len;

    if (!OBJ_find_sigid_by_algs(&sig_nid, EVP_MD_get_type(md), key_nid))
        return rs_fail(err, "no signature algorithm for %s with a %s key", EVP_MD_get0_name(md),
                       EVP_PKEY_get0_type_name(s->public_key));
    /* OpenSSL 3.0 fills these two fields only inside X509_sign, which
     * needs the private key in memory; they are the certificate's own
     * fields, reached through its getters. */
    X509_get0_signature(&value, &outer, cert);
    if (!set_algorithm((X509_ALGOR *)X509_get0_tbs_sigalg(cert), sig_nid, key_nid) ||
        !set_algorithm((X509_ALGOR *)outer, sig_nid, key_nid))
        return rs_fail_ssl(err, "cannot set the certificate's signature algorithm");
    if ((len = i2d_re_X509_tbs(cert, &tbs)) <= 0)
        return rs_fail_ssl(err, "cannot encode the certificate");
    if (!EVP_Digest(tbs, (size_t)len, digest, &digest_len, md, NULL)) {
        OPENSSL_free(tbs);
        return rs_fail_ssl(err, "cannot hash the certificate");
    }
    OPENSSL_free(tbs);
    if (rs_signer_sign_digest(s, md, digest, digest_len, &sig, err) < 0)
        return -1;
    signature = (ASN1_BIT_STRING *)value;
    if (!ASN1_BIT_STRING_set(signature, sig.data, (int)sig.len))
        return rs_fail_ssl(err, "cannot store the certificate's signature");
    /* A signature is whole bytes: no unused bits (as X509_sign sets it). */
    signature->flags &= ~(ASN1_STRING_FLAG_BITS_LEFT | 0x07);
    signature->flags |= ASN1_STRING_FLAG_BITS_LEFT;
    if (X509_verify(cert, s->public_key) != 1)
        return rs_fail_ssl(err, "the signed certificate does not verify with its key");
    return 0;
}

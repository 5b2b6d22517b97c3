/* Key pairs made on a PKCS#11 token: C_GenerateKeyPair in a read-write
 * session, the private half sensitive and never extractable, both halves
 * and later the certificate under one label and one random CKA_ID. What
 * was made is destroyed again unless the caller keeps it. */
#ifndef RS_PKCS11_KEYGEN_H
#define RS_PKCS11_KEYGEN_H

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "crypto/pkcs11_token.h"
#include "crypto/pkcs11_uri.h"

#define RS_P11_KEYGEN_ID_LEN 16
/* Three keys with a certificate each: two halves and a certificate. */
#define RS_P11_KEYGEN_MAX_OBJECTS 9

typedef struct rs_p11_keygen {
    char *spec;                  /* the token's URI, as given */
    rs_p11_uri uri;
    rs_p11_token token;
    CK_OBJECT_HANDLE made[RS_P11_KEYGEN_MAX_OBJECTS];
    size_t n_made;
    bool keep;
} rs_p11_keygen;

typedef struct rs_p11_new_key {
    EVP_PKEY *public_key;
    char *uri;                   /* of the private key, for rs_signer_open */
    char label[64];
    uint8_t id[RS_P11_KEYGEN_ID_LEN];
} rs_p11_new_key;

/* Opens the token a pkcs11: URI names (it must name no object) in a
 * read-write session and logs in. */
int rs_p11_keygen_open(const char *spec, rs_p11_keygen *k, rs_error *err);
/* Generates an RSA key pair labelled label; refuses a label the token
 * already has. */
int rs_p11_keygen_rsa(rs_p11_keygen *k, const char *label, int bits, rs_p11_new_key *out, rs_error *err);
/* Stores cert on the token beside its key (same label and CKA_ID). */
int rs_p11_keygen_store_cert(rs_p11_keygen *k, const rs_p11_new_key *key, X509 *cert, rs_error *err);
/* Closes the session; destroys every object made unless k->keep. */
void rs_p11_keygen_close(rs_p11_keygen *k);
void rs_p11_new_key_free(rs_p11_new_key *key);

#endif

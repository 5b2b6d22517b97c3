/* A rebuilder's public key, as in-toto and securesystemslib write them:
 * a JSON key file ({"keytype", "scheme", "keyval": {"public"}}: ed25519
 * with the raw key in hex, ecdsa with a PEM key) or a PEM public key file
 * (RSA, signing with rsassa-pss-sha256, as in-toto-keygen writes them; a
 * P-256 or Ed25519 PEM key works too). */
#ifndef RS_ATTEST_KEY_H
#define RS_ATTEST_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

typedef struct evp_pkey_st EVP_PKEY;

typedef enum rs_attest_scheme {
    RS_ATTEST_ED25519,
    RS_ATTEST_RSA_PSS_SHA256,
    RS_ATTEST_ECDSA_P256_SHA256,
} rs_attest_scheme;

/* A key file is small: a PEM RSA-16384 key is under 3 KiB. */
#define RS_ATTEST_KEY_MAX_FILE (64 * 1024)

typedef struct rs_attest_key {
    EVP_PKEY *pkey;
    rs_attest_scheme scheme;
    /* The key ID signatures name it by: SHA-256 of the canonical JSON of
     * the public key with keyid_hash_algorithms ["sha256", "sha512"], as
     * securesystemslib computes it (lower-case hex). */
    char keyid[65];
    /* What the key is: SHA-256 of its DER SubjectPublicKeyInfo. Two files
     * (or two key IDs) holding the same key have the same fingerprint, and
     * count once. */
    char fingerprint[65];
} rs_attest_key;

int rs_attest_key_load(const char *path, rs_attest_key *key, rs_error *err);
/* The same from the bytes of a key file (path is for errors only). */
int rs_attest_key_parse(const uint8_t *data, size_t len, rs_attest_key *key, rs_error *err);
void rs_attest_key_clear(rs_attest_key *key);
const char *rs_attest_scheme_name(rs_attest_scheme scheme);

/* Whether sig is the key's signature over msg in its scheme: 1 if it is,
 * 0 if not (a malformed signature included), -1 on an error of the library. */
int rs_attest_key_verify(const rs_attest_key *key, const uint8_t *msg, size_t len, const uint8_t *sig,
                         size_t siglen, rs_error *err);

#endif

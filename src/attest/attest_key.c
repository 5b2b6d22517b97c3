#include "attest/attest_key.h"

#include <jansson.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <stdlib.h>
#include <string.h>

#include "attest/canonical.h"
#include "base/bytes.h"
#include "base/file.h"
#include "base/json_values.h"
#include "crypto/ossl.h"

#define PEM_HEADER "-----BEGIN PUBLIC KEY-----"
#define PEM_FOOTER "-----END PUBLIC KEY-----"
/* Smaller RSA keys are refused: nothing that vouches for a boot loader
 * should be breakable for the price of a cloud bill. */
#define MIN_RSA_BITS 2048

const char *rs_attest_scheme_name(rs_attest_scheme scheme)
{
    switch (scheme) {
    case RS_ATTEST_ED25519: return "ed25519";
    case RS_ATTEST_RSA_PSS_SHA256: return "rsassa-pss-sha256";
    case RS_ATTEST_ECDSA_P256_SHA256: return "ecdsa-sha2-nistp256";
    }
    return "?";
}

/* securesystemslib's key ID: SHA-256 of the canonical JSON of the public
 * key's metadata, keyid_hash_algorithms included (it always adds
 * ["sha256", "sha512"], whatever the key file says). */
static int compute_keyid(const char *keytype, const char *scheme, const char *public, char out[65], rs_error *err)
{
    _cleanup_(rs_jsonp) json_t *meta = json_pack("{s:[s,s], s:s, s:{s:s}, s:s}", "keyid_hash_algorithms", "sha256",
                                                 "sha512", "keytype", keytype, "keyval", "public", public, "scheme",
                                                 scheme);
    _cleanup_bytes_ rs_bytes text = { 0 };
    uint8_t id[32];

    if (!meta)
        return rs_fail(err, "the public key is not UTF-8");
    if (rs_canonical_json(meta, &text, err) < 0)
        return -1;
    rs_sha256(text.data, text.len, id);
    rs_hex(id, sizeof(id), out);
    return 0;
}

static int compute_fingerprint(rs_attest_key *key, rs_error *err)
{
    unsigned char *der = NULL;
    uint8_t fp[32];
    int len = i2d_PUBKEY(key->pkey, &der);

    if (len <= 0)
        return rs_fail_ssl(err, "cannot encode the public key");
    rs_sha256(der, (size_t)len, fp);
    OPENSSL_free(der);
    rs_hex(fp, sizeof(fp), key->fingerprint);
    return 0;
}

static int pem_key(const char *pem, size_t len, EVP_PKEY **out, rs_error *err)
{
    _cleanup_(rs_biop) BIO *bio = BIO_new_mem_buf(pem, (int)len);

    if (!bio || !(*out = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL)))
        return rs_fail_ssl(err, "not a PEM public key");
    return 0;
}

/* Which scheme a key signs with, and whether it is one accepted. */
static int key_scheme(EVP_PKEY *pkey, rs_attest_scheme *scheme, rs_error *err)
{
    char group[64];

    if (EVP_PKEY_is_a(pkey, "ED25519")) {
        *scheme = RS_ATTEST_ED25519;
    } else if (EVP_PKEY_is_a(pkey, "RSA")) {
        if (EVP_PKEY_get_bits(pkey) < MIN_RSA_BITS)
            return rs_fail(err, "an RSA key of %d bits (at least %d are needed)", EVP_PKEY_get_bits(pkey),
                           MIN_RSA_BITS);
        *scheme = RS_ATTEST_RSA_PSS_SHA256;
    } else if (EVP_PKEY_is_a(pkey, "EC")) {
        if (!EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group), NULL) ||
            strcmp(group, "prime256v1"))
            return rs_fail(err, "an EC key that is not on P-256");
        *scheme = RS_ATTEST_ECDSA_P256_SHA256;
    } else {
        return rs_fail(err, "a key of a type attestations are not signed with (ed25519, RSA, P-256)");
    }
    return 0;
}

/* A PEM file: its key ID is computed from the PEM text itself, from the
 * header to the footer, as securesystemslib imports it (an EC key's
 * written by Python's cryptography ends with a newline, kept). */
static int parse_pem(const char *text, size_t len, rs_attest_key *key, rs_error *err)
{
    const char *begin = memmem(text, len, PEM_HEADER, strlen(PEM_HEADER));
    const char *end = begin ? memmem(begin, len - (size_t)(begin - text), PEM_FOOTER, strlen(PEM_FOOTER)) : NULL;
    char hex[65];
    uint8_t raw[32];
    size_t rawlen = sizeof(raw);

    if (!end)
        return rs_fail(err, "not a PEM public key (no %s ... %s)", PEM_HEADER, PEM_FOOTER);
    end += strlen(PEM_FOOTER);
    if (pem_key(begin, (size_t)(end - begin), &key->pkey, err) < 0 || key_scheme(key->pkey, &key->scheme, err) < 0)
        return -1;
    if (key->scheme == RS_ATTEST_ED25519) {
        if (!EVP_PKEY_get_raw_public_key(key->pkey, raw, &rawlen) || rawlen != sizeof(raw))
            return rs_fail_ssl(err, "cannot read the Ed25519 key");
        rs_hex(raw, rawlen, hex);
        return compute_keyid("ed25519", "ed25519", hex, key->keyid, err);
    }
    size_t n = (size_t)(end - begin);
    _cleanup_free_ char *pem = malloc(n + 2);
    if (!pem)
        return rs_fail(err, "out of memory");
    memcpy(pem, begin, n);
    if (key->scheme == RS_ATTEST_ECDSA_P256_SHA256)
        pem[n++] = '\n';
    pem[n] = '\0';
    for (char *r = pem, *w = pem;; r++)   /* "\r\n" read as "\n", as securesystemslib does */
        if (*r != '\r' || r[1] != '\n')
            if (!(*w++ = *r))
                break;
    return key->scheme == RS_ATTEST_RSA_PSS_SHA256 ? compute_keyid("rsa", "rsassa-pss-sha256", pem, key->keyid, err)
                                                   : compute_keyid("ecdsa", "ecdsa-sha2-nistp256", pem, key->keyid, err);
}

static int parse_json(const uint8_t *data, size_t len, rs_attest_key *key, rs_error *err)
{
    json_error_t jerr;
    _cleanup_(rs_jsonp) json_t *doc = json_loadb((const char *)data, len, JSON_REJECT_DUPLICATES, &jerr);
    const char *keytype = NULL, *scheme = NULL, *public = NULL;
    rs_attest_scheme want;
    uint8_t raw[32];

    if (!doc)
        return rs_fail(err, "not a key file: line %d: %s", jerr.line, jerr.text);
    if (json_unpack_ex(doc, &jerr, 0, "{s:s, s:s, s:{s:s}}", "keytype", &keytype, "scheme", &scheme, "keyval",
                       "public", &public) < 0)
        return rs_fail(err, "not a securesystemslib key: %s", jerr.text);
    if (!strcmp(keytype, "ed25519") && !strcmp(scheme, "ed25519")) {
        if (strlen(public) != 64 || rs_unhex(public, raw, sizeof(raw)) < 0 || strspn(public, "0123456789abcdef") != 64)
            return rs_fail(err, "an ed25519 key's keyval.public is not 64 lower-case hex digits");
        if (!(key->pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, raw, sizeof(raw))))
            return rs_fail_ssl(err, "not an Ed25519 public key");
        want = RS_ATTEST_ED25519;
    } else if ((!strcmp(keytype, "ecdsa") || !strcmp(keytype, "ecdsa-sha2-nistp256")) &&
               !strcmp(scheme, "ecdsa-sha2-nistp256")) {
        want = RS_ATTEST_ECDSA_P256_SHA256;
        if (pem_key(public, strlen(public), &key->pkey, err) < 0)
            return -1;
    } else if (!strcmp(keytype, "rsa") && !strcmp(scheme, "rsassa-pss-sha256")) {
        want = RS_ATTEST_RSA_PSS_SHA256;
        if (pem_key(public, strlen(public), &key->pkey, err) < 0)
            return -1;
    } else {
        return rs_fail(err, "keytype %s with scheme %s is not one attestations are verified with", keytype, scheme);
    }
    if (key_scheme(key->pkey, &key->scheme, err) < 0)
        return -1;
    if (key->scheme != want)
        return rs_fail(err, "keyval.public holds a key of another type than keytype %s", keytype);
    return compute_keyid(keytype, scheme, public, key->keyid, err);
}

int rs_attest_key_parse(const uint8_t *data, size_t len, rs_attest_key *key, rs_error *err)
{
    size_t skip = 0;
    int r;

    memset(key, 0, sizeof(*key));
    while (skip < len && strchr(" \t\r\n", data[skip]))
        skip++;
    if (skip < len && data[skip] == '{')
        r = parse_json(data, len, key, err);
    else if (memchr(data, '\0', len))
        r = rs_fail(err, "not a key file (it holds a NUL byte)");
    else {
        _cleanup_free_ char *text = strndup((const char *)data, len);
        r = text ? parse_pem(text, len, key, err) : rs_fail(err, "out of memory");
    }
    if (r == 0)
        r = compute_fingerprint(key, err);
    if (r < 0)
        rs_attest_key_clear(key);
    return r;
}

int rs_attest_key_load(const char *path, rs_attest_key *key, rs_error *err)
{
    _cleanup_bytes_ rs_bytes data = { 0 };

    if (rs_read_file(path, RS_ATTEST_KEY_MAX_FILE, &data, err) < 0 ||
        rs_attest_key_parse(data.data, data.len, key, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

void rs_attest_key_clear(rs_attest_key *key)
{
    EVP_PKEY_free(key->pkey);
    key->pkey = NULL;
}

int rs_attest_key_verify(const rs_attest_key *key, const uint8_t *msg, size_t len, const uint8_t *sig,
                         size_t siglen, rs_error *err)
{
    _cleanup_(rs_mdctxp) EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    EVP_PKEY_CTX *pctx = NULL;
    const char *md = key->scheme == RS_ATTEST_ED25519 ? NULL : "SHA256";
    int ok;

    if (!ctx || EVP_DigestVerifyInit_ex(ctx, &pctx, md, NULL, NULL, key->pkey, NULL) != 1)
        return rs_fail_ssl(err, "cannot start verifying a %s signature", rs_attest_scheme_name(key->scheme));
    /* PSS with MGF1-SHA-256; the salt's length read from the signature,
     * as securesystemslib verifies (it signs with a 32-byte salt). */
    if (key->scheme == RS_ATTEST_RSA_PSS_SHA256 &&
        (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) != 1 ||
         EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_AUTO) != 1))
        return rs_fail_ssl(err, "cannot set up RSA-PSS");
    ok = EVP_DigestVerify(ctx, sig, siglen, msg, len);
    ERR_clear_error();   /* a bad signature leaves reasons that are not errors */
    return ok == 1;
}

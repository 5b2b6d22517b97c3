#include "uefi/keygen.h"

#include <errno.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/child_env.h"
#include "base/cleanup.h"
#include "base/file.h"
#include "crypto/cert_sign.h"
#include "crypto/ossl.h"
#include "crypto/pkcs11_keygen.h"
#include "crypto/signer.h"
#include "uefi/authvar.h"
#include "uefi/efi.h"
#include "uefi/esl.h"

/* PK signs its own update and KEK's; KEK signs db's. */
static const struct {
    const char *name;
    int signer;                  /* index of the key that signs its update */
} vars[] = { { "PK", 0 }, { "KEK", 0 }, { "db", 1 } };
#define NVARS 3

DEFINE_POINTER_CLEANUP(rs_bnp, BIGNUM, BN_free)

/* Ten years: firmware ignores validity, but tools that read the
 * certificates do not. */
#define VALIDITY_DAYS 3650

static int add_ext(X509 *cert, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509_EXTENSION *ext;

    X509V3_set_ctx(&ctx, cert, cert, NULL, NULL, 0);
    if (!(ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value)))
        return -1;
    int ok = X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    return ok ? 0 : -1;
}

/* The certificate's fields; it is signed afterwards by the key's signer,
 * wherever the key lives. */
static X509 *cert_fields(EVP_PKEY *key, const char *cn, rs_error *err)
{
    _cleanup_(rs_x509p) X509 *cert = X509_new();
    uint8_t serial[16];
    _cleanup_(rs_bnp) BIGNUM *bn = NULL;   /* the serial */

    if (!cert || RAND_bytes(serial, sizeof(serial)) != 1) {
        rs_fail_ssl(err, "cannot make a certificate");
        return NULL;
    }
    serial[0] &= 0x7f;   /* a positive INTEGER */
    if (!(bn = BN_bin2bn(serial, sizeof(serial), NULL)) || !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)) ||
        !X509_set_version(cert, 2) || !X509_gmtime_adj(X509_getm_notBefore(cert), 0) ||
        !X509_gmtime_adj(X509_getm_notAfter(cert), 86400L * VALIDITY_DAYS) || !X509_set_pubkey(cert, key) ||
        !X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1,
                                    -1, 0) ||
        !X509_set_issuer_name(cert, X509_get_subject_name(cert)) ||
        add_ext(cert, NID_subject_key_identifier, "hash") < 0 || add_ext(cert, NID_basic_constraints, "critical,CA:TRUE") < 0 ||
        add_ext(cert, NID_key_usage, "critical,digitalSignature,keyCertSign,cRLSign") < 0) {
        rs_fail_ssl(err, "cannot make the certificate for %s", cn);
        return NULL;
    }
    return TAKE_PTR(cert);
}

typedef struct made {
    X509 *cert;
    rs_bytes der;                /* cert, as NAME.cer and the lists hold it */
    rs_signer *signer;           /* the key, with cert */
    rs_p11_new_key on_token;     /* with --token */
} made;

static int write_pem(const char *path, EVP_PKEY *key, X509 *cert, mode_t mode, rs_error *err)
{
    _cleanup_(rs_biop) BIO *bio = BIO_new(BIO_s_mem());
    char *data;
    long len;

    if (!bio || !(key ? PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL) : PEM_write_bio_X509(bio, cert)))
        return rs_fail_ssl(err, "%s: cannot encode", path);
    len = BIO_get_mem_data(bio, &data);
    return rs_write_file(path, data, (size_t)len, mode, err);
}

static int write_der(const char *path, X509 *cert, rs_bytes *der, rs_error *err)
{
    unsigned char *buf = NULL;
    int len = i2d_X509(cert, &buf);

    if (len <= 0)
        return rs_fail_ssl(err, "%s: cannot encode", path);
    rs_bytes_adopt(der, buf, (size_t)len);
    return rs_write_file(path, der->data, der->len, 0644, err);
}

/* A new key in a file (0600): its spec is the path. */
static int file_key(const uefi_keygen_options *o, const char *dir, const char *name, EVP_PKEY **pub, char *spec,
                    size_t cap, rs_error *err)
{
    if (!(*pub = EVP_RSA_gen((unsigned)o->bits)))
        return rs_fail_ssl(err, "cannot generate an RSA-%d key", o->bits);
    snprintf(spec, cap, "%s/%s.key", dir, name);
    return write_pem(spec, *pub, NULL, 0600, err);
}

/* The key pair (in a file or on the token), its certificate signed by
 * the key itself through the signer, NAME.crt and NAME.cer. */
static int make_key(const uefi_keygen_options *o, rs_p11_keygen *token, const char *dir, const char *name, made *m,
                    rs_error *err)
{
    _cleanup_(rs_pkeyp) EVP_PKEY *file_pub = NULL;
    char cn[256], path[4096], key_path[4096];
    EVP_PKEY *pub;

    snprintf(cn, sizeof(cn), "%s %s", o->common_name, name);
    if ((token ? rs_p11_keygen_rsa(token, name, o->bits, &m->on_token, err)
               : file_key(o, dir, name, &file_pub, key_path, sizeof(key_path), err)) < 0)
        return -1;
    pub = token ? m->on_token.public_key : file_pub;
    if (!(m->cert = cert_fields(pub, cn, err)) ||
        rs_signer_open_with_cert(token ? m->on_token.uri : key_path, m->cert, &m->signer, err) < 0 ||
        rs_x509_sign_with(m->cert, m->signer, EVP_sha256(), err) < 0 ||
        (token && rs_p11_keygen_store_cert(token, &m->on_token, m->cert, err) < 0))
        return rs_error_prefix(err, "%s", name);
    snprintf(path, sizeof(path), "%s/%s.crt", dir, name);
    if (write_pem(path, NULL, m->cert, 0644, err) < 0)
        return -1;
    snprintf(path, sizeof(path), "%s/%s.cer", dir, name);
    return write_der(path, m->cert, &m->der, err);
}

/* NAME.esl, and NAME.auth signed by signer. */
static int make_update(const uefi_keygen_options *o, const char *dir, const char *name, const efi_guid *owner,
                       const made *self, rs_signer *signer, rs_error *err)
{
    _cleanup_bytes_ rs_bytes esl = { 0 }, auth = { 0 };
    authvar_target t = { .name = name, .attributes = EFI_SECURE_VAR_ATTRS };
    char path[4096];

    memcpy(t.timestamp, o->timestamp, EFI_TIME_SIZE);
    snprintf(path, sizeof(path), "%s/%s.esl", dir, name);
    if (efi_secure_var(name, &t.guid, err) < 0 || esl_append_x509(&esl, owner, self->der.data, self->der.len, err) < 0 ||
        rs_write_file(path, esl.data, esl.len, 0644, err) < 0)
        return -1;
    snprintf(path, sizeof(path), "%s/%s.auth", dir, name);
    if (authvar_sign(&t, esl.data, esl.len, signer, &auth, err) < 0 ||
        rs_write_file(path, auth.data, auth.len, 0644, err) < 0)
        return -1;
    return 0;
}

static int make_all(const uefi_keygen_options *o, rs_p11_keygen *token, const char *dir, rs_error *err)
{
    made m[NVARS] = { 0 };
    efi_guid owner;
    char guid[EFI_GUID_STR], line[EFI_GUID_STR + 1], path[4096];
    int rc = 0;

    /* A random (version 4) GUID owns every list these keys make. */
    if (RAND_bytes(owner.b, sizeof(owner.b)) != 1)
        return rs_fail_ssl(err, "no random bytes");
    owner.b[7] = (uint8_t)((owner.b[7] & 0x0f) | 0x40);
    owner.b[8] = (uint8_t)((owner.b[8] & 0x3f) | 0x80);
    efi_guid_format(&owner, guid);
    snprintf(line, sizeof(line), "%s\n", guid);
    snprintf(path, sizeof(path), "%s/GUID", dir);
    rc = rs_write_file(path, line, strlen(line), 0644, err);
    for (int i = 0; rc == 0 && i < NVARS; i++)
        rc = make_key(o, token, dir, vars[i].name, &m[i], err);
    for (int i = 0; rc == 0 && i < NVARS; i++)
        rc = make_update(o, dir, vars[i].name, &owner, &m[i], m[vars[i].signer].signer, err);
    for (int i = 0; i < NVARS; i++) {
        if (m[i].signer)
            rs_signer_free(m[i].signer);
        X509_free(m[i].cert);
        rs_bytes_free(&m[i].der);
        rs_p11_new_key_free(&m[i].on_token);
    }
    return rc;
}

int uefi_keygen(const uefi_keygen_options *o, rs_error *err)
{
    _cleanup_(rs_p11_keygen_close) rs_p11_keygen token = { 0 };
    _cleanup_free_ char *tmp = NULL;
    struct stat st;

    if (o->bits != 2048 && o->bits != 3072 && o->bits != 4096)
        return rs_fail(err, "RSA-%d: firmware expects RSA-2048 (3072 and 4096 where it accepts them)", o->bits);
    if (lstat(o->dir, &st) == 0)
        return rs_fail(err, "%s: already exists; keys are never overwritten", o->dir);
    if (asprintf(&tmp, "%s.partial-XXXXXX", o->dir) < 0 || !mkdtemp(tmp))
        return rs_fail(err, "%s: cannot create a directory: %s", o->dir, strerror(errno));
    /* The new keys are in this process's memory (file keys) or its
     * session is logged in to the token. */
    rs_protect_key_memory();
    if ((o->token && rs_p11_keygen_open(o->token, &token, err) < 0) ||
        make_all(o, o->token ? &token : NULL, tmp, err) < 0) {
        rs_remove_tree(tmp);
        return rs_error_prefix(err, "%s", o->dir);
    }
    if (chmod(tmp, 0700) < 0 || rename(tmp, o->dir) < 0) {
        int e = errno;

        rs_remove_tree(tmp);
        return rs_fail(err, "%s: %s", o->dir, strerror(e));
    }
    /* Only now are the keys on the token kept (rs_p11_keygen_close). */
    token.keep = true;
    return 0;
}

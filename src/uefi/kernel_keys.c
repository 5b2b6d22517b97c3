#include "uefi/kernel_keys.h"

#include <openssl/err.h>
#include <stdio.h>
#include <string.h>

#include "archive/decompress.h"
#include "base/cleanup.h"
#include "crypto/ossl.h"
#include "ops/ops.h"
#include "uefi/esl.h"
#include "uefi/kernel_certs.h"

void kernel_keys_free(kernel_keys *k)
{
    rs_trust_free(&k->builtin);
    rs_trust_free(&k->machine);
    rs_trust_free(&k->platform);
    free(k->revoked_bin.items);
    free(k->revoked_tbs.items);
    memset(k, 0, sizeof(*k));
}

/* blacklist.c / x509_public_key.c: a certificate whose TBS hash is
 * blacklisted is rejected when a keyring would load it. */
static bool tbs_blacklisted(const kernel_keys *k, X509 *cert)
{
    unsigned char *tbs = NULL;
    rs_digest d = { .md = EVP_sha256(), .len = 32 };
    int len = i2d_re_X509_tbs(cert, &tbs);
    bool ok = len > 0 && EVP_Digest(tbs, (size_t)len, d.bytes, NULL, d.md, NULL);

    OPENSSL_free(tbs);
    return ok && rs_trust_hash_listed(&k->revoked_tbs, &d);
}

typedef struct loader {
    kernel_keys *k;
    rs_trust *keyring;           /* NULL: a revocation list */
} loader;

/* load_uefi.c get_handler_for_db / get_handler_for_mok (all X509
 * entries go to the keyring) and get_handler_for_dbx (SHA-256 image
 * hashes become "bin:" entries, X509_SHA256 "tbs:" entries). */
static int load_entry(void *ctx, const esl_entry *e, rs_error *err)
{
    loader *l = ctx;
    const unsigned char *p = e->data;
    rs_digest d = { .md = EVP_sha256(), .len = 32 };
    X509 *cert;
    int r = 0;

    if (l->keyring && efi_guid_equal(&e->type, &efi_guid_cert_x509)) {
        cert = d2i_X509(NULL, &p, (long)e->len);
        ERR_clear_error();
        if (cert && !tbs_blacklisted(l->k, cert))
            r = rs_trust_add_anchor(l->keyring, cert, err);
        X509_free(cert);
        return r;
    }
    if (l->keyring)
        return 0;
    if (efi_guid_equal(&e->type, &efi_guid_cert_sha256)) {
        memcpy(d.bytes, e->data, 32);
        return rs_trust_add_hash(&l->k->revoked_bin, &d, err);
    }
    if (efi_guid_equal(&e->type, &efi_guid_cert_x509_sha256)) {
        memcpy(d.bytes, e->data, 32);
        return rs_trust_add_hash(&l->k->revoked_tbs, &d, err);
    }
    return 0;
}

static int load(kernel_keys *k, rs_trust *keyring, const rs_bytes *esl, const char *name, rs_error *err)
{
    loader l = { k, keyring };

    if (!esl || !esl->len)
        return 0;
    if (esl_walk(esl->data, esl->len, load_entry, &l, err) < 0)
        return rs_error_prefix(err, "%s", name);
    return 0;
}

/* shim adds its vendor certificate (or its vendor_db) to MokListRT. */
static int load_vendor(kernel_keys *k, const kernel_sources *src, rs_error *err)
{
    const unsigned char *p = src->vendor_cert;
    X509 *cert;
    int r = 0;
    rs_bytes esl = { .data = (uint8_t *)src->vendor_cert, .len = src->vendor_cert_len };

    if (!src->vendor_cert || !src->vendor_cert_len)
        return 0;
    cert = d2i_X509(NULL, &p, (long)src->vendor_cert_len);
    ERR_clear_error();
    if (cert && p == src->vendor_cert + src->vendor_cert_len) {
        if (!tbs_blacklisted(k, cert))
            r = rs_trust_add_anchor(&k->machine, cert, err);
        X509_free(cert);
        return r;
    }
    X509_free(cert);
    return load(k, &k->machine, &esl, "vendor_db", err);
}

static int load_builtin(kernel_keys *k, const kernel_sources *src, rs_error *err)
{
    size_t n;
    int r;

    if (src->builtin) {
        k->builtin_from = KERNEL_BUILTIN_FILE;
        k->builtin_path = src->builtin;
        return rs_trust_add_file(&k->builtin, src->builtin, err);
    }
    k->builtin_path = src->image;
    if (!src->image)
        return 0;
    if ((r = kernel_image_certs(src->image, RS_MAX_DECOMPRESSED, &k->builtin, &n, err)) < 0)
        return -1;
    k->builtin_from = r ? KERNEL_BUILTIN_IMAGE : KERNEL_BUILTIN_NONE;
    return 0;
}

int kernel_keys_load(kernel_keys *k, const kernel_sources *src, rs_error *err)
{
    memset(k, 0, sizeof(*k));
    if (rs_trust_init(&k->builtin, err) < 0 || rs_trust_init(&k->machine, err) < 0 ||
        rs_trust_init(&k->platform, err) < 0)
        return -1;
    /* Revocations first: a blacklisted certificate never enters a keyring. */
    if (load(k, NULL, src->dbx, "dbx", err) < 0 || load(k, NULL, src->mokx, "MokListX", err) < 0)
        return -1;
    /* The built-in keys are loaded before the EFI lists (both are late
     * initcalls, and certs/ links before security/): dbx never reaches them. */
    if (load_builtin(k, src, err) < 0)
        return -1;
    if (load(k, &k->machine, src->mok, "MokList", err) < 0 || load_vendor(k, src, err) < 0)
        return -1;
    /* load_uefi.c: db is skipped when MokIgnoreDB is set. */
    if (!src->ignore_db && load(k, &k->platform, src->db, "db", err) < 0)
        return -1;
    return 0;
}

static int refuse(module_verdict *v, const char *why)
{
    v->ok = false;
    snprintf(v->detail, sizeof(v->detail), "%s", why);
    return 0;
}

/* Debian's "MODSIGN: checking the blacklisted hash" patch hashes
 * wholelen, the module file with its signature (as sha256sum shows it). */
static int file_sha256(const char *path, rs_digest *d, rs_error *err)
{
    _cleanup_(rs_mdctxp) EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    rs_input in = { .fd = -1 };
    int r;

    if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL))
        return rs_fail_ssl(err, "digest failed");
    if (rs_input_open(&in, path, err) < 0)
        return -1;
    r = rs_input_hash(&in, 0, in.size, ctx, err);
    rs_input_close(&in);
    d->md = EVP_sha256();
    if (r == 0 && !EVP_DigestFinal_ex(ctx, d->bytes, &d->len))
        r = rs_fail_ssl(err, "digest failed");
    return r;
}

/* mod_verify_sig: the secondary keyring (.builtin_trusted_keys and
 * .machine), then .platform; then the content hash against the blacklist.
 * The key the signature's identifier names decides: only when no keyring
 * holds it (-ENOKEY) does the kernel try the next. A found key that does
 * not verify is -EKEYREJECTED, which refuses the module with or without
 * lockdown (module_sig_check). */
int kernel_verify_module(const char *path, const kernel_keys *k, module_verdict *v, rs_error *err)
{
    const rs_trust *rings[] = { &k->builtin, &k->machine, &k->platform };
    const char *names[] = { ".builtin_trusted_keys", ".machine", ".platform" };
    rs_digest content;
    char hex[RS_DIGEST_STR];

    memset(v, 0, sizeof(*v));
    for (size_t i = 0; i < 3 && !v->ok; i++) {
        _cleanup_(rs_verification_free) rs_verification sigs = { 0 };

        if (rs_op_verify(path, rings[i], &sigs, err) < 0)
            return -1;
        if (sigs.count == 0)
            return refuse(v, "not signed, which lockdown refuses (LOCKDOWN_MODULE_SIGNATURE)");
        if (sigs.reports[0].ok) {
            v->ok = true;
            snprintf(v->keyring, sizeof(v->keyring), "%s", names[i]);
            snprintf(v->detail, sizeof(v->detail), "key of %s", sigs.reports[0].anchor);
        } else if (sigs.reports[0].key_found) {
            snprintf(v->detail, sizeof(v->detail),
                     "its signer's key is in %s, but the signature does not verify with it (%.512s): "
                     "Key was rejected by service (EKEYREJECTED)",
                     names[i], sigs.reports[0].reason);
            return 0;
        }
    }
    /* Debian's kernels since trixie sign every module with a key made for
     * that build, whose certificate is only in the kernel image. */
    if (!v->ok)
        return refuse(v, k->builtin_from != KERNEL_BUILTIN_NONE
                             ? "signed by a key in no keyring (.builtin_trusted_keys, .machine, .platform)"
                             : "signed by a key in no keyring (.builtin_trusted_keys, .machine, .platform; "
                               "the first is empty: the last stage is no kernel image it can read, and no "
                               "--kernel-keys gives the kernel's build certificates)");
    if (file_sha256(path, &content, err) < 0)
        return -1;
    if (rs_trust_hash_listed(&k->revoked_bin, &content)) {
        rs_digest_format(&content, hex, sizeof(hex));
        snprintf(v->detail, sizeof(v->detail), "its SHA-256 %s is blacklisted (dbx or MokListX)", hex);
        v->ok = false;
    }
    return 0;
}

#include "uefi/uefi_trust.h"

#include <string.h>

#include "base/file.h"
#include "crypto/ossl.h"
#include "uefi/efivarfs.h"
#include "uefi/esl.h"

#define MAX_ESL_FILE (16u * 1024 * 1024)

typedef struct loader {
    rs_trust *trust;
    bool dbx;
} loader;

static int add_cert(loader *l, const esl_entry *e, rs_error *err)
{
    const unsigned char *p = e->data;
    _cleanup_(rs_x509p) X509 *cert = d2i_X509(NULL, &p, (long)e->len);

    if (!cert)
        return rs_fail_ssl(err, "signature list %zu: entry is not a DER X.509 certificate", e->list);
    return l->dbx ? rs_trust_add_revoked(l->trust, cert, err) : rs_trust_add_anchor(l->trust, cert, err);
}

static int add_entry(void *ctx, const esl_entry *e, rs_error *err)
{
    loader *l = ctx;
    const EVP_MD *md = esl_hash_md(&e->type);
    rs_digest d = { 0 };

    if (efi_guid_equal(&e->type, &efi_guid_cert_x509))
        return add_cert(l, e, err);
    if (md) {
        d.md = md;
        d.len = (unsigned)e->len;
        memcpy(d.bytes, e->data, e->len);
        return rs_trust_add_hash(l->dbx ? &l->trust->forbidden : &l->trust->allowed, &d, err);
    }
    /* The revocation time that follows the hash only matters with
     * timestamped signatures, which boot images do not carry. */
    if (l->dbx && efi_guid_equal(&e->type, &efi_guid_cert_x509_sha256)) {
        d.md = EVP_sha256();
        d.len = 32;
        memcpy(d.bytes, e->data, 32);
        return rs_trust_add_hash(&l->trust->revoked_tbs, &d, err);
    }
    return 0;
}

int uefi_trust_add_esl(rs_trust *t, const uint8_t *buf, size_t len, bool dbx, rs_error *err)
{
    loader l = { t, dbx };

    return esl_walk(buf, len, add_entry, &l, err);
}

int uefi_read_esl_file(const char *path, rs_bytes *out, rs_error *err)
{
    if (rs_read_file(path, MAX_ESL_FILE, out, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

int uefi_trust_add_esl_file(rs_trust *t, const char *path, bool dbx, rs_error *err)
{
    _cleanup_bytes_ rs_bytes esl = { 0 };

    if (uefi_read_esl_file(path, &esl, err) < 0)
        return -1;
    if (uefi_trust_add_esl(t, esl.data, esl.len, dbx, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

static int add_signature_db(void *ctx, varstore_db which, const uint8_t *esl, size_t len, rs_error *err)
{
    return uefi_trust_add_esl(ctx, esl, len, which == VARSTORE_DBX, err);
}

int uefi_trust_add_varstore(rs_trust *t, const char *path, rs_error *err)
{
    _cleanup_varstore_ varstore vs = { 0 };

    if (varstore_load(path, &vs, err) < 0)
        return -1;
    return varstore_each_signature_db(&vs, path, add_signature_db, t, err);
}

int uefi_trust_add_efivarfs(rs_trust *t, const char *dir, rs_error *err)
{
    _cleanup_varstore_ varstore vs = { 0 };

    if (efivarfs_load(dir, &vs, err) < 0)
        return -1;
    return varstore_each_signature_db(&vs, dir, add_signature_db, t, err);
}

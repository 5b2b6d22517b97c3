#include "uefi/shim_db.h"

#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <string.h>

#include "crypto/ossl.h"
#include "uefi/efi.h"
#include "uefi/esl.h"

/* struct cert_table: four little-endian uint32s. */
#define CERT_TABLE 16
#define OID_EKU_MODSIGN "1.3.6.1.4.1.2312.16.1.2"

static int list_init(shim_list *l, const char *name, bool sha1, rs_error *err)
{
    l->name = name;
    l->sha1 = sha1;
    return rs_trust_init(&l->certs, err);
}

int shim_db_init(shim_db *s, rs_error *err)
{
    memset(s, 0, sizeof(*s));
    /* verify.c check_denylist / check_allowlist: SHA-1 hashes are looked
     * up in dbx, db and the vendor dbx (vendor_deauthorized) only. */
    if (list_init(&s->db, "db", true, err) < 0 || list_init(&s->dbx, "dbx", true, err) < 0 ||
        list_init(&s->mok, "MokListRT", false, err) < 0 || list_init(&s->mokx, "MokListX", false, err) < 0 ||
        list_init(&s->vendor_db, "vendor_db", false, err) < 0 ||
        list_init(&s->vendor_dbx, "vendor_dbx", true, err) < 0)
        return -1;
    return rs_trust_init(&s->vendor_cert, err);
}

static void list_free(shim_list *l)
{
    rs_trust_free(&l->certs);
    free(l->hashes.items);
    l->hashes.items = NULL;
    l->hashes.n = 0;
}

void shim_db_free(shim_db *s)
{
    list_free(&s->db);
    list_free(&s->dbx);
    list_free(&s->mok);
    list_free(&s->mokx);
    list_free(&s->vendor_db);
    list_free(&s->vendor_dbx);
    rs_trust_free(&s->vendor_cert);
}

bool shim_cert_is_modsign(X509 *cert)
{
    EXTENDED_KEY_USAGE *eku = X509_get_ext_d2i(cert, NID_ext_key_usage, NULL, NULL);
    ASN1_OBJECT *modsign = OBJ_txt2obj(OID_EKU_MODSIGN, 1);
    bool found = false;

    for (int i = 0; eku && modsign && i < sk_ASN1_OBJECT_num(eku); i++)
        found |= OBJ_cmp(sk_ASN1_OBJECT_value(eku, i), modsign) == 0;
    EXTENDED_KEY_USAGE_free(eku);
    ASN1_OBJECT_free(modsign);
    ERR_clear_error();
    return found;
}

/* verify.c verify_x509: "30 82 LL LL" and LL equal to the rest. */
static bool shim_der_shape(const uint8_t *p, size_t len)
{
    return len >= 4 && p[0] == 0x30 && p[1] == 0x82 && (size_t)(p[2] << 8 | p[3]) == len - 4;
}

typedef struct adder {
    shim_list *list;
    size_t last_list;        /* index of the last X509 list whose first entry was seen */
    bool any;
} adder;

/* verify.c check_db_cert_in_ram tries the first entry of each X509 list
 * only, skipping malformed DER (verify_x509) and module-signing
 * certificates (verify_eku). */
static int add_cert(adder *a, const esl_entry *e, rs_error *err)
{
    const unsigned char *p = e->data;
    _cleanup_(rs_x509p) X509 *cert = NULL;

    if (a->any && a->last_list == e->list)
        return 0;
    a->any = true;
    a->last_list = e->list;
    if (!shim_der_shape(e->data, e->len))
        return 0;
    cert = d2i_X509(NULL, &p, (long)e->len);
    ERR_clear_error();
    if (!cert || shim_cert_is_modsign(cert))
        return 0;
    return rs_trust_add_anchor(&a->list->certs, cert, err);
}

/* verify.c check_db_hash_in_ram: EFI_CERT_SHA256 entries, and
 * EFI_CERT_SHA1 ones where shim passes SHA-1 digests. Other types
 * (EFI_CERT_X509_SHA256 among them) are never read. */
static int add_entry(void *ctx, const esl_entry *e, rs_error *err)
{
    adder *a = ctx;
    rs_digest d = { 0 };

    if (efi_guid_equal(&e->type, &efi_guid_cert_x509))
        return add_cert(a, e, err);
    if (efi_guid_equal(&e->type, &efi_guid_cert_sha256))
        d.md = EVP_sha256();
    else if (a->list->sha1 && efi_guid_equal(&e->type, &efi_guid_cert_sha1))
        d.md = EVP_sha1();
    else
        return 0;
    d.len = (unsigned)e->len;
    memcpy(d.bytes, e->data, e->len);
    return rs_trust_add_hash(&a->list->hashes, &d, err);
}

int shim_list_add_esl(shim_list *l, const uint8_t *buf, size_t len, rs_error *err)
{
    adder a = { l, 0, false };

    if (esl_walk(buf, len, add_entry, &a, err) < 0)
        return rs_error_prefix(err, "%s", l->name);
    return 0;
}

/* shim.c: vendor_authorized is the DER vendor_cert, unless the build has
 * a VENDOR_DB_FILE, when it is vendor_db. A blob that is exactly one
 * certificate is read as vendor_cert, anything else as a list. */
static int add_authorized(shim_db *s, const uint8_t *p, size_t len, rs_error *err)
{
    const unsigned char *q = p;
    _cleanup_(rs_x509p) X509 *cert = d2i_X509(NULL, &q, (long)len);

    if (cert && q == p + len) {
        s->has_vendor_cert = true;
        return rs_trust_add_anchor(&s->vendor_cert, cert, err);
    }
    ERR_clear_error();
    if (shim_list_add_esl(&s->vendor_db, p, len, err) < 0)
        return rs_error_prefix(err, "vendor certificate is neither DER X.509 nor a signature list");
    return 0;
}

int shim_cert_table_read(const uint8_t *sec, size_t len, shim_cert_table *t, rs_error *err)
{
    if (len < CERT_TABLE)
        return rs_fail(err, ".vendor_cert section is too short (%zu bytes)", len);
    t->auth_size = efi_le32(sec);
    t->deauth_size = efi_le32(sec + 4);
    t->auth_off = efi_le32(sec + 8);
    t->deauth_off = efi_le32(sec + 12);
    if ((uint64_t)t->auth_off + t->auth_size > len || (uint64_t)t->deauth_off + t->deauth_size > len)
        return rs_fail(err, ".vendor_cert entries (%u bytes at %u, %u bytes at %u) lie outside the section (%zu bytes)",
                       t->auth_size, t->auth_off, t->deauth_size, t->deauth_off, len);
    return 0;
}

int shim_db_add_vendor_cert(shim_db *s, const uint8_t *sec, size_t len, rs_error *err)
{
    shim_cert_table t = { 0 };

    if (shim_cert_table_read(sec, len, &t, err) < 0)
        return -1;
    if (t.auth_size && add_authorized(s, sec + t.auth_off, t.auth_size, err) < 0)
        return -1;
    if (t.deauth_size && shim_list_add_esl(&s->vendor_dbx, sec + t.deauth_off, t.deauth_size, err) < 0)
        return -1;
    return 0;
}

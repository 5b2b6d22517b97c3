/* The signature databases shim consults, each read the way shim 16.1 reads
 * it (verify.c: check_db_hash_in_ram, check_db_cert_in_ram), which is not
 * the way firmware does:
 * - of an EFI_CERT_X509 list only the first entry is tried;
 * - a certificate that is not "30 82 LL LL" DER of exactly its size
 *   (verify_x509), or that carries the module-signing EKU (verify_eku), is
 *   skipped;
 * - EFI_CERT_X509_SHA256 entries (TBS hashes) are never read;
 * - SHA-1 image hashes are read from db, dbx and the vendor dbx only;
 *   MokList, MokListX and vendor_db hold SHA-256 hashes for shim. */
#ifndef RS_UEFI_SHIM_DB_H
#define RS_UEFI_SHIM_DB_H

#include "crypto/trust.h"

typedef struct shim_list {
    const char *name;        /* as shim's messages name it: "db", "MokListRT", ... */
    rs_trust certs;          /* anchors: the certificates shim tries */
    rs_digest_list hashes;   /* image hashes shim looks up */
    bool sha1;               /* whether shim looks SHA-1 digests up in it */
} shim_list;

/* Everything shim's verify_buffer_authenticode looks at. */
typedef struct shim_db {
    shim_list db, dbx, mok, mokx, vendor_db, vendor_dbx;
    rs_trust vendor_cert;    /* the built-in DER vendor_cert, when it is one */
    bool has_vendor_cert;
    bool ignore_db;          /* MokIgnoreDB: db is not consulted */
    bool insecure;           /* MokSBState: shim verifies nothing */
} shim_db;

int shim_db_init(shim_db *s, rs_error *err);
void shim_db_free(shim_db *s);
#define _cleanup_shim_db_ __attribute__((cleanup(shim_db_free)))

/* Adds the entries of a signature-list buffer that shim would use. */
int shim_list_add_esl(shim_list *l, const uint8_t *buf, size_t len, rs_error *err);

/* shim's .vendor_cert section (struct cert_table in shim.c): the
 * authorized blob is a DER certificate (vendor_cert) or, in builds made
 * with VENDOR_DB_FILE, an ESL (vendor_db); the deauthorized blob is the
 * vendor dbx ESL. */
int shim_db_add_vendor_cert(shim_db *s, const uint8_t *sec, size_t len, rs_error *err);

/* The struct cert_table that starts a .vendor_cert section: where its two
 * blobs lie. */
typedef struct shim_cert_table {
    uint32_t auth_size, deauth_size, auth_off, deauth_off;
} shim_cert_table;
/* The table of a section of len bytes, both blobs checked to lie in it. */
int shim_cert_table_read(const uint8_t *sec, size_t len, shim_cert_table *t, rs_error *err);

/* True when cert carries the module-signing EKU (1.3.6.1.4.1.2312.16.1.2),
 * which shim's verify_eku refuses as an anchor. */
bool shim_cert_is_modsign(X509 *cert);

#endif

/* What a verification trusts: a set of anchor certificates. Firmware and
 * shim accept a chain that ends at any certificate in db, self-signed or
 * not, and ignore validity periods; the store is configured the same way.
 *
 * UEFI adds lists beside the anchors (db image hashes, dbx certificates
 * and hashes); formats that firmware verifies apply them, see
 * rs_trust_has_lists(). */
#ifndef RS_TRUST_H
#define RS_TRUST_H

#include <openssl/x509.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "crypto/digest.h"

typedef struct rs_digest_list {
    rs_digest *items;
    size_t n;
} rs_digest_list;

typedef struct rs_trust {
    STACK_OF(X509) *anchors;
    STACK_OF(X509) *revoked;     /* dbx certificates */
    rs_digest_list allowed;      /* db image hashes */
    rs_digest_list forbidden;    /* dbx image hashes */
    rs_digest_list revoked_tbs;  /* dbx EFI_CERT_X509_SHA256: SHA-256 of a TBSCertificate */
} rs_trust;

int rs_trust_init(rs_trust *t, rs_error *err);
void rs_trust_free(rs_trust *t);
int rs_trust_add_file(rs_trust *t, const char *path, rs_error *err);
/* Add a reference to cert as an anchor, or as revoked (dbx). */
int rs_trust_add_anchor(rs_trust *t, X509 *cert, rs_error *err);
int rs_trust_add_revoked(rs_trust *t, X509 *cert, rs_error *err);
int rs_trust_add_hash(rs_digest_list *list, const rs_digest *d, rs_error *err);
/* Copies everything src trusts and revokes into dst (which is initialised). */
int rs_trust_merge(rs_trust *dst, const rs_trust *src, rs_error *err);
/* True when any UEFI list (db hashes, dbx) is loaded. */
bool rs_trust_has_lists(const rs_trust *t);
bool rs_trust_hash_listed(const rs_digest_list *list, const rs_digest *d);
/* EDK2's dbx rule for certificates: true when the signer or any certificate
 * that would chain it (from untrusted) is revoked, by certificate or by
 * TBS hash. Stores the revoked certificate's subject in which (malloc'ed). */
bool rs_trust_revokes(const rs_trust *t, X509 *signer, STACK_OF(X509) *untrusted, char **which);
/* Builds a chain from signer (with untrusted helpers) to an anchor. On
 * success stores the anchor's subject in anchor (malloc'ed). */
int rs_trust_chain(const rs_trust *t, X509 *signer, STACK_OF(X509) *untrusted, char **anchor, rs_error *err);

#define _cleanup_trust_ __attribute__((cleanup(rs_trust_free)))

#endif

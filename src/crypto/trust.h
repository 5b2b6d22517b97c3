/* What a verification trusts: a set of anchor certificates. Firmware and
 * shim accept a chain that ends at any certificate in db, self-signed or
 * not, and ignore validity periods; the store is configured the same way. */
#ifndef RS_TRUST_H
#define RS_TRUST_H

#include <openssl/x509.h>
#include <stdbool.h>

#include "base/error.h"

typedef struct rs_trust {
    STACK_OF(X509) *anchors;
} rs_trust;

int rs_trust_init(rs_trust *t, rs_error *err);
void rs_trust_free(rs_trust *t);
int rs_trust_add_file(rs_trust *t, const char *path, rs_error *err);
/* Builds a chain from signer (with untrusted helpers) to an anchor. On
 * success stores the anchor's subject in anchor (malloc'ed). */
int rs_trust_chain(const rs_trust *t, X509 *signer, STACK_OF(X509) *untrusted, char **anchor, rs_error *err);

#define _cleanup_trust_ __attribute__((cleanup(rs_trust_free)))

#endif

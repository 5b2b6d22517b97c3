/* Certificates a reader may hand out instead of decoding a byte-identical
 * copy, or look up by a request's certificate_sha256: the signing service
 * sees its own certificate in every request, and decoding one costs about
 * a fifth of an RSA-2048 signature. */
#ifndef RS_KNOWN_CERTS_H
#define RS_KNOWN_CERTS_H

#include <openssl/x509.h>
#include <stdint.h>

#include "base/bytes.h"
#include "base/error.h"

typedef struct rs_known_certs {
    X509 **certs;
    rs_bytes *der;               /* each one's encoding, to compare with */
    uint8_t (*sha256)[32];       /* each one's fingerprint */
    size_t n;
} rs_known_certs;

int rs_known_certs_add(rs_known_certs *k, X509 *cert, rs_error *err);
void rs_known_certs_free(rs_known_certs *k);
/* A new reference to the known certificate whose DER is exactly der, or
 * to the one with this SHA-256; NULL if none (known may be NULL). */
X509 *rs_known_certs_by_der(const rs_known_certs *known, const rs_bytes *der);
X509 *rs_known_certs_by_sha256(const rs_known_certs *known, const uint8_t want[32]);

#endif

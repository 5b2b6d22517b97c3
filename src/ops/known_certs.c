#include "ops/known_certs.h"

#include <stdlib.h>
#include <string.h>

#include "crypto/ossl.h"

int rs_known_certs_add(rs_known_certs *k, X509 *cert, rs_error *err)
{
    X509 **certs = reallocarray(k->certs, k->n + 1, sizeof(*certs));
    rs_bytes *der = certs ? reallocarray(k->der, k->n + 1, sizeof(*der)) : NULL;
    uint8_t(*sha256)[32] = der ? reallocarray(k->sha256, k->n + 1, sizeof(*sha256)) : NULL;
    unsigned char *enc = NULL;
    int len;

    if (certs)
        k->certs = certs;
    if (der)
        k->der = der;
    if (sha256)
        k->sha256 = sha256;
    if (!sha256)
        return rs_fail(err, "out of memory");
    if ((len = i2d_X509(cert, &enc)) <= 0)
        return rs_fail_ssl(err, "cannot encode a certificate");
    if (!X509_up_ref(cert)) {
        OPENSSL_free(enc);
        return rs_fail(err, "out of memory");
    }
    rs_sha256(enc, (size_t)len, k->sha256[k->n]);
    k->certs[k->n] = cert;
    k->der[k->n] = (rs_bytes){ 0 };
    rs_bytes_adopt(&k->der[k->n++], enc, (size_t)len);
    return 0;
}

void rs_known_certs_free(rs_known_certs *k)
{
    for (size_t i = 0; i < k->n; i++) {
        X509_free(k->certs[i]);
        rs_bytes_free(&k->der[i]);
    }
    free(k->certs);
    free(k->der);
    free(k->sha256);
    *k = (rs_known_certs){ 0 };
}

X509 *rs_known_certs_by_der(const rs_known_certs *known, const rs_bytes *der)
{
    for (size_t i = 0; known && i < known->n; i++)
        if (known->der[i].len == der->len && memcmp(known->der[i].data, der->data, der->len) == 0 &&
            X509_up_ref(known->certs[i]))
            return known->certs[i];
    return NULL;
}

X509 *rs_known_certs_by_sha256(const rs_known_certs *known, const uint8_t want[32])
{
    for (size_t i = 0; known && i < known->n; i++)
        if (memcmp(known->sha256[i], want, 32) == 0 && X509_up_ref(known->certs[i]))
            return known->certs[i];
    return NULL;
}

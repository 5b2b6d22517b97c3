/* Signs a certificate through the signer interface, so a key on a token
 * signs its own certificate without leaving the token: OpenSSL encodes
 * the TBSCertificate, the signer signs its digest. */
#ifndef RS_CERT_SIGN_H
#define RS_CERT_SIGN_H

#include <openssl/x509.h>

#include "base/error.h"
#include "crypto/signer.h"

/* Fills both signature algorithm fields for md and s's key type, signs,
 * and checks the result against s's public key. */
int rs_x509_sign_with(X509 *cert, rs_signer *s, const EVP_MD *md, rs_error *err);

#endif

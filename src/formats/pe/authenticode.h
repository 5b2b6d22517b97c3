/* Authenticode signatures: PKCS#7 SignedData whose content is an
 * SpcIndirectDataContent carrying the image digest. */
#ifndef RS_AUTHENTICODE_H
#define RS_AUTHENTICODE_H

#include "base/bytes.h"
#include "crypto/digest.h"
#include "crypto/trust.h"
#include "formats/format.h"

/* The format's two signing phases (format.h); the signature uses
 * image_digest->md throughout. The bytes to be signed are the DER signed
 * attributes, which carry the hash of the content for image_digest. */
int authenticode_to_be_signed(const rs_digest *image_digest, X509 *cert, const rs_sign_options *opts, rs_bytes *tbs,
                              rs_error *err);
int authenticode_assemble(const rs_digest *image_digest, const rs_bytes *tbs, const rs_bytes *signature, X509 *cert,
                          STACK_OF(X509) *chain, const rs_sign_options *opts, rs_bytes *der, rs_error *err);

/* Reads the image digest a signature binds to. */
int authenticode_bound_digest(const rs_bytes *der, rs_digest *out, rs_error *err);

int authenticode_describe(const rs_bytes *der, rs_sig_info *info, rs_error *err);

/* Checks the PKCS#7 signature itself and its chain to an anchor. The
 * binding to the image is checked separately by the caller. */
int authenticode_verify(const rs_bytes *der, const rs_trust *trust, rs_verify_report *report, rs_error *err);

/* Length of the DER object at the start of buf (to drop table padding). */
size_t authenticode_der_length(const uint8_t *buf, size_t len);

#endif

/* Authenticode signatures: PKCS#7 SignedData whose content is an
 * SpcIndirectDataContent carrying the image digest. */
#ifndef RS_AUTHENTICODE_H
#define RS_AUTHENTICODE_H

#include "base/bytes.h"
#include "crypto/digest.h"
#include "crypto/signer.h"
#include "crypto/trust.h"
#include "formats/format.h"

/* Signs an image digest; the signature uses image_digest->md throughout. */
int authenticode_sign(const rs_digest *image_digest, rs_signer *signer, const rs_sign_options *opts, rs_bytes *der,
                      rs_error *err);

/* Reads the image digest a signature binds to. */
int authenticode_bound_digest(const rs_bytes *der, rs_digest *out, rs_error *err);

int authenticode_describe(const rs_bytes *der, rs_sig_info *info, rs_error *err);

/* Checks the PKCS#7 signature itself and its chain to an anchor. The
 * binding to the image is checked separately by the caller. */
int authenticode_verify(const rs_bytes *der, const rs_trust *trust, rs_verify_report *report, rs_error *err);

/* Length of the DER object at the start of buf (to drop table padding). */
size_t authenticode_der_length(const uint8_t *buf, size_t len);

#endif

/* Declared trust, checked against what the image embeds: every
 * certificate an image to be signed would itself trust (uefi/
 * embedded_trust.h) must be listed in its package's trusted_certs and be
 * on the signer's allowlist. Reading only what files.json declares, a
 * template could have a shim carrying an unknown CA signed by leaving
 * trusted_certs out. */
#ifndef RS_EMBEDDED_TRUST_CHECK_H
#define RS_EMBEDDED_TRUST_CHECK_H

#include <stddef.h>

#include "formats/format.h"
#include "pipeline/files_json.h"

/* allowed: the allowlist's fingerprints (lowercase hex), n_allowed of them. */
int rs_check_embedded_trust(rs_image *img, const rs_sign_package *pkg, const char *path, char *const *allowed,
                            size_t n_allowed, rs_error *err);

#endif

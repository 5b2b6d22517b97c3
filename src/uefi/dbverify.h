/* Firmware's decision on one image under db/dbx (EDK2's
 * DxeImageVerificationLib): the per-signature rules live in the format's
 * verify; this adds the verdict for the image as a whole, including
 * unsigned images, which only a db hash can admit. */
#ifndef RS_UEFI_DBVERIFY_H
#define RS_UEFI_DBVERIFY_H

#include "ops/ops.h"

typedef struct uefi_verdict {
    bool ok;
    rs_verification sigs;           /* per-signature reports (count 0: unsigned) */
    rs_digest image_hash;           /* SHA-256, for unsigned images */
    const char *anchor;             /* what admitted it (borrowed from sigs), or "db: image hash" */
    char reason[RS_ERROR_MAX];      /* why it was refused */
} uefi_verdict;

int uefi_verify_image(const char *path, const rs_trust *trust, uefi_verdict *out, rs_error *err);
void uefi_verdict_free(uefi_verdict *v);

#endif

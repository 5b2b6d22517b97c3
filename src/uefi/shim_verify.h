/* shim 16.1's signature decision for one image (verify.c,
 * verify_buffer_authenticode), the same for images shim loads itself and
 * for those GRUB hands it through the shim_lock protocol. */
#ifndef RS_UEFI_SHIM_VERIFY_H
#define RS_UEFI_SHIM_VERIFY_H

#include "formats/format.h"
#include "uefi/shim_db.h"

typedef struct shim_verdict {
    bool ok;
    char rule[96];           /* the rule that decided, in shim's order */
    char detail[RS_ERROR_MAX]; /* the trust entry that accepted or refused, or why nothing did */
} shim_verdict;

int shim_verify_image(rs_image *img, const shim_db *db, shim_verdict *v, rs_error *err);

#endif

/* SBAT (shim's Secure Boot Advanced Targeting): an image's .sbat section is
 * CSV, one "component,generation,..." line per component; shim's
 * .sbatlevel section (shim 15.7+) carries the revocation levels it applies:
 * u32 version, u32 offset of "previous", u32 offset of "latest" (both from
 * the end of the version field), each a NUL-terminated CSV of
 * "component,minimum generation" lines. */
#ifndef RS_UEFI_SBAT_H
#define RS_UEFI_SBAT_H

#include <stddef.h>

#include "base/error.h"
#include "formats/format.h"

typedef struct sbat_image {
    char *sbat;              /* .sbat up to its first NUL, or NULL */
    char *previous;          /* from .sbatlevel, or NULL */
    char *latest;
} sbat_image;

int sbat_from_image(rs_image *img, sbat_image *s, rs_error *err);
int sbat_image_load(const char *path, sbat_image *s, rs_error *err);
void sbat_image_free(sbat_image *s);

/* Compares an image's .sbat with a level, as shim does: an entry whose
 * generation is below the level's for the same component is revoked.
 * Returns 1 when revoked (why says which), 0 when not, -1 on error. */
int sbat_check(const char *image_sbat, const char *level, char *why, size_t cap, rs_error *err);

#endif

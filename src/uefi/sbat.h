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

/* Reads .sbat (for display) and .sbatlevel. */
int sbat_from_image(rs_image *img, sbat_image *s, rs_error *err);
int sbat_image_load(const char *path, sbat_image *s, rs_error *err);
void sbat_image_free(sbat_image *s);

/* The .sbat data as shim finds it. refusal is set when shim refuses the
 * image for its SBAT section's layout; csv is NULL when shim finds none. */
typedef struct sbat_section {
    char *csv;
    char refusal[128];
} sbat_section;

int sbat_shim_section(rs_image *img, sbat_section *out, rs_error *err);
void sbat_section_free(sbat_section *s);

/* Compares an image's .sbat with a level, as shim does (sbat_csv.c).
 * Returns 1 when shim refuses the image (a revoked generation, or a
 * malformed .sbat row; why says which), 0 when not, -1 when the level
 * itself does not parse. */
int sbat_check(const char *image_sbat, const char *level, char *why, size_t cap, rs_error *err);
/* 0 when shim can parse level as an SbatLevel, -1 (with why) when not. */
int sbat_level_check(const char *level, rs_error *err);

#endif

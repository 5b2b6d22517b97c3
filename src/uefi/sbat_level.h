/* Which SBAT level a booting shim applies (shim 16.1 sbat.c,
 * set_sbat_uefi_variable in secure mode): SbatPolicy picks a candidate
 * from shim's .sbatlevel ("previous" by default, "latest" on request); an
 * SbatLevel variable already in flash is kept whole when it is newer
 * (preserve_sbat_uefi_variable), else replaced by the candidate. */
#ifndef RS_UEFI_SBAT_LEVEL_H
#define RS_UEFI_SBAT_LEVEL_H

#include <stdbool.h>

#include "base/error.h"
#include "uefi/sbat.h"

/* SbatPolicy values (include/sbat.h). */
#define SBAT_POLICY_LATEST 1
#define SBAT_POLICY_AUTOMATIC 2
#define SBAT_POLICY_RESET 3

/* The level of shims before 15.7, which had no .sbatlevel section: the
 * original SBAT_VAR ("sbat,1,2021030218"), which is also the least any
 * shim applies in secure mode. */
#define SBAT_LEVEL_ORIGINAL "sbat,1,2021030218\n"

typedef struct sbat_level_input {
    const char *variable;    /* SbatLevel as found in flash, or NULL */
    bool variable_attrs_ok;  /* NV|BS without RT, as shim requires */
    int policy;              /* SbatPolicy, 0 when absent */
} sbat_level_input;

typedef struct sbat_level {
    char *csv;               /* the level that applies */
    char source[160];        /* where it comes from, in shim's terms */
} sbat_level;

int sbat_level_effective(const sbat_image *shim, const sbat_level_input *in, sbat_level *out, rs_error *err);
void sbat_level_free(sbat_level *l);

/* Parses "latest", "automatic", "previous" or "reset" (or 1..3). */
int sbat_policy_parse(const char *s, int *policy, rs_error *err);

#endif

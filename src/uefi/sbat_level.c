#include "uefi/sbat_level.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* sbat.h SBAT_VAR_SIG and the length of SBAT_VAR_ORIGINAL_DATE. */
#define LEVEL_SIG "sbat,"
#define DATESTAMP_LEN 10

void sbat_level_free(sbat_level *l)
{
    free(l->csv);
    l->csv = NULL;
}

int sbat_policy_parse(const char *s, int *policy, rs_error *err)
{
    if (!strcmp(s, "latest") || !strcmp(s, "1"))
        *policy = SBAT_POLICY_LATEST;
    else if (!strcmp(s, "automatic") || !strcmp(s, "previous") || !strcmp(s, "2"))
        *policy = SBAT_POLICY_AUTOMATIC;
    else if (!strcmp(s, "reset") || !strcmp(s, "3"))
        *policy = SBAT_POLICY_RESET;
    else
        return rs_fail(err, "unknown SBAT policy '%s' (latest, automatic or reset)", s);
    return 0;
}

/* sbat.c nth_sbat_field: the text after the nth comma. */
static const char *nth_field(const char *s, int n)
{
    for (; *s; s++) {
        if (n == 0)
            return s;
        if (*s == ',')
            n--;
    }
    return s;
}

/* sbat.c preserve_sbat_uefi_variable: keep the variable when its version
 * (field 1) is greater, compared by length then bytes, or its datestamp
 * (field 2) is the same or later. */
static bool preserve(const sbat_level_input *in, const char *candidate)
{
    const char *cur = in->variable, *cv, *nv, *cd, *nd;
    size_t cv_len, nv_len;

    if (!in->variable_attrs_ok || strlen(cur) < strlen(SBAT_LEVEL_ORIGINAL) ||
        strncmp(cur, LEVEL_SIG, strlen(LEVEL_SIG)) != 0)
        return false;
    cv = nth_field(cur, 1);
    nv = nth_field(candidate, 1);
    cd = nth_field(cur, 2);
    nd = nth_field(candidate, 2);
    cv_len = cd > cv ? (size_t)(cd - cv - 1) : 0;
    nv_len = nd > nv ? (size_t)(nd - nv - 1) : 0;
    if (cv_len > nv_len || (cv_len == nv_len && strncmp(cv, nv, nv_len) > 0))
        return true;
    return strncmp(cd, nd, DATESTAMP_LEN) >= 0;
}

/* The candidate, in secure mode: SbatPolicy "latest" takes .sbatlevel's
 * latest; automatic, an absent policy, an invalid one and "reset" (which
 * secure mode refuses) take its "previous" (automatic_offset). */
static const char *candidate_of(const sbat_image *shim, int policy, const char **what)
{
    if (!shim->previous) {
        *what = "the level built into this shim (it has no .sbatlevel: shim before 15.7)";
        return SBAT_LEVEL_ORIGINAL;
    }
    if (policy == SBAT_POLICY_LATEST) {
        *what = "shim's .sbatlevel \"latest\" (SbatPolicy=latest)";
        return shim->latest;
    }
    *what = "shim's .sbatlevel \"previous\" (SbatPolicy automatic or unset)";
    return shim->previous;
}

int sbat_level_effective(const sbat_image *shim, const sbat_level_input *in, sbat_level *out, rs_error *err)
{
    const char *what = NULL, *candidate = candidate_of(shim, in->policy, &what);

    memset(out, 0, sizeof(*out));
    if (in->variable && preserve(in, candidate)) {
        out->csv = strdup(in->variable);
        snprintf(out->source, sizeof(out->source), "SbatLevel variable (kept: not older than %s)", what);
    } else {
        out->csv = strdup(candidate);
        snprintf(out->source, sizeof(out->source), "%s%s", what,
                 in->variable ? ", which replaces the older SbatLevel variable" : "");
    }
    if (!out->csv)
        return rs_fail(err, "out of memory");
    if (sbat_level_check(out->csv, err) < 0) {
        sbat_level_free(out);
        return rs_error_prefix(err, "%s", out->source);
    }
    return 0;
}

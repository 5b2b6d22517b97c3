#include "uefi/chain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "uefi/dbverify.h"
#include "uefi/sbat.h"
#include "uefi/vendor_cert.h"

void chain_result_free(chain_result *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->stages[i].anchor);
    free(r->stages);
    memset(r, 0, sizeof(*r));
}

static int verify_stage(const char *path, const rs_trust *trust, chain_stage *s, rs_error *err)
{
    _cleanup_(uefi_verdict_free) uefi_verdict v = { 0 };

    s->path = path;
    if (uefi_verify_image(path, trust, &v, err) < 0)
        return -1;
    s->ok = v.ok;
    if (v.ok)
        s->anchor = strdup(v.anchor ? v.anchor : "?");
    else
        snprintf(s->reason, sizeof(s->reason), "%s", v.reason);
    return 0;
}

/* What shim adds for the images it loads, and its SBAT level. */
static int shim_policy(const char *path, rs_trust *trust, sbat_image *level, chain_result *r, rs_error *err)
{
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    int found;

    if (rs_image_open(&img, path, err) < 0)
        return -1;
    found = vendor_cert_add(&img, trust, err);
    if (found < 0 || sbat_from_image(&img, level, err) < 0)
        return rs_error_prefix(err, "%s", path);
    r->vendor_cert = found > 0;
    r->sbat_level = level->previous != NULL;
    return 0;
}

static int check_sbat(const sbat_image *level, chain_stage *s, rs_error *err)
{
    _cleanup_(sbat_image_free) sbat_image img = { 0 };
    char why[RS_ERROR_MAX - 16];
    int revoked;

    if (sbat_image_load(s->path, &img, err) < 0)
        return -1;
    if (!img.sbat) {
        snprintf(s->reason, sizeof(s->reason), "no .sbat section, which shim requires");
        return 1;
    }
    revoked = sbat_check(img.sbat, level->previous, why, sizeof(why), err);
    if (revoked < 0)
        return rs_error_prefix(err, "%s", s->path);
    if (revoked)
        snprintf(s->reason, sizeof(s->reason), "SBAT: %s", why);
    return revoked;
}

static int later_stage(const rs_trust *trust, const sbat_image *level, const char *path, chain_stage *s,
                       rs_error *err)
{
    int revoked;

    if (verify_stage(path, trust, s, err) < 0)
        return -1;
    if (!level->previous)
        return 0;
    revoked = check_sbat(level, s, err);
    if (revoked < 0)
        return -1;
    if (revoked) {
        s->ok = false;
        free(s->anchor);
        s->anchor = NULL;
    }
    return 0;
}

int chain_verify(const rs_trust *firmware, char *const *paths, size_t n, chain_result *r, rs_error *err)
{
    _cleanup_trust_ rs_trust shim = { 0 };
    _cleanup_(sbat_image_free) sbat_image level = { 0 };

    memset(r, 0, sizeof(*r));
    r->stages = calloc(n ? n : 1, sizeof(*r->stages));
    if (!r->stages)
        return rs_fail(err, "out of memory");
    if (rs_trust_init(&shim, err) < 0 || rs_trust_merge(&shim, firmware, err) < 0)
        return -1;
    if (n == 0 || verify_stage(paths[0], firmware, &r->stages[0], err) < 0)
        return n ? -1 : rs_fail(err, "no images");
    r->n = 1;
    if (n > 1 && shim_policy(paths[0], &shim, &level, r, err) < 0)
        return -1;
    for (size_t i = 1; i < n; i++, r->n++)
        if (later_stage(&shim, &level, paths[i], &r->stages[i], err) < 0)
            return -1;
    r->ok = true;
    for (size_t i = 0; i < r->n; i++)
        r->ok &= r->stages[i].ok;
    return 0;
}

#include "uefi/dbverify.h"

#include <stdio.h>
#include <string.h>

void uefi_verdict_free(uefi_verdict *v)
{
    rs_verification_free(&v->sigs);
}

/* EDK2 hashes an unsigned image with SHA-256 and looks it up in dbx, then db. */
static int verify_unsigned(const char *path, const rs_trust *trust, uefi_verdict *v, rs_error *err)
{
    char hex[RS_DIGEST_STR];

    if (rs_op_digest(path, EVP_sha256(), &v->image_hash, err) < 0)
        return -1;
    rs_digest_format(&v->image_hash, hex, sizeof(hex));
    if (rs_trust_hash_listed(&trust->forbidden, &v->image_hash))
        snprintf(v->reason, sizeof(v->reason), "not signed, and its hash %s is in dbx", hex);
    else if (rs_trust_hash_listed(&trust->allowed, &v->image_hash)) {
        v->ok = true;
        v->anchor = "db: image hash";
    } else
        snprintf(v->reason, sizeof(v->reason), "not signed, and its hash %s is not in db", hex);
    return 0;
}

int uefi_verify_image(const char *path, const rs_trust *trust, uefi_verdict *v, rs_error *err)
{
    memset(v, 0, sizeof(*v));
    if (rs_op_verify(path, trust, &v->sigs, err) < 0)
        return -1;
    if (v->sigs.count == 0)
        return verify_unsigned(path, trust, v, err);
    for (size_t i = 0; i < v->sigs.count; i++) {
        const rs_verify_report *r = &v->sigs.reports[i];

        if (r->ok && !v->ok) {
            v->ok = true;
            v->anchor = r->anchor;
        }
    }
    if (!v->ok)
        snprintf(v->reason, sizeof(v->reason), "%s", v->sigs.reports[0].reason);
    return 0;
}

#include "crypto/digest.h"

#include <stdio.h>
#include <string.h>

#include "base/bytes.h"

int rs_md_by_name(const char *name, const EVP_MD **md, rs_error *err)
{
    if (!strcmp(name, "sha256"))
        *md = EVP_sha256();
    else if (!strcmp(name, "sha384"))
        *md = EVP_sha384();
    else if (!strcmp(name, "sha512"))
        *md = EVP_sha512();
    else
        return rs_fail(err, "unsupported hash '%s' (use sha256, sha384 or sha512)", name);
    return 0;
}

const char *rs_md_name(const EVP_MD *md)
{
    switch (md ? EVP_MD_get_type(md) : NID_undef) {
    case NID_sha1:
        return "sha1";
    case NID_sha256:
        return "sha256";
    case NID_sha384:
        return "sha384";
    case NID_sha512:
        return "sha512";
    default:
        return "unknown";
    }
}

void rs_digest_format(const rs_digest *d, char *out, size_t outlen)
{
    char hex[2 * RS_MAX_DIGEST + 1];

    rs_hex(d->bytes, d->len, hex);
    snprintf(out, outlen, "%s:%s", rs_md_name(d->md), hex);
}

int rs_digest_equal(const rs_digest *a, const rs_digest *b)
{
    return a->len == b->len && EVP_MD_get_type(a->md) == EVP_MD_get_type(b->md) &&
           memcmp(a->bytes, b->bytes, a->len) == 0;
}

#include "crypto/digest.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/bytes.h"
#include "base/json_values.h"

static const char *const md_names[] = { "sha256", "sha384", "sha512" };
static EVP_MD *fetched[3];
static pthread_once_t fetch_once = PTHREAD_ONCE_INIT;

static void fetch_mds(void)
{
    for (size_t i = 0; i < 3; i++)
        fetched[i] = EVP_MD_fetch(NULL, md_names[i], NULL);
}

/* Fetched once: EVP_sha256() and its kin are looked up again by name
 * every time a digest, a signature or a verification starts with them. */
int rs_md_by_name(const char *name, const EVP_MD **md, rs_error *err)
{
    static const EVP_MD *(*const legacy[])(void) = { EVP_sha256, EVP_sha384, EVP_sha512 };

    pthread_once(&fetch_once, fetch_mds);
    for (size_t i = 0; i < 3; i++)
        if (!strcmp(name, md_names[i])) {
            *md = fetched[i] ? fetched[i] : legacy[i]();
            return 0;
        }
    return rs_fail(err, "unsupported hash '%s' (use sha256, sha384 or sha512)", name);
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

json_t *rs_digest_json(const rs_digest *d)
{
    const char *alg = rs_md_name(d->md);

    return strcmp(alg, "unknown") ? rs_json_digest(alg, d->bytes, d->len) : NULL;
}

int rs_digest_equal(const rs_digest *a, const rs_digest *b)
{
    return a->len == b->len && EVP_MD_get_type(a->md) == EVP_MD_get_type(b->md) &&
           memcmp(a->bytes, b->bytes, a->len) == 0;
}

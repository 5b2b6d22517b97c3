/* The digest algorithms a signature may use, by their CLI names. */
#ifndef RS_DIGEST_H
#define RS_DIGEST_H

#include <jansson.h>
#include <openssl/evp.h>

#include "base/error.h"

#define RS_MAX_DIGEST EVP_MAX_MD_SIZE

typedef struct rs_digest {
    const EVP_MD *md;
    unsigned len;
    unsigned char bytes[RS_MAX_DIGEST];
} rs_digest;

/* "sha256", "sha384" or "sha512"; anything else is refused. */
int rs_md_by_name(const char *name, const EVP_MD **md, rs_error *err);
const char *rs_md_name(const EVP_MD *md);
/* Formats "sha256:<hex>" into out (size >= 8 + 2*RS_MAX_DIGEST + 1). */
void rs_digest_format(const rs_digest *d, char *out, size_t outlen);
/* The digest as --json writes it (base/json_values.h); NULL when empty. */
json_t *rs_digest_json(const rs_digest *d);
int rs_digest_equal(const rs_digest *a, const rs_digest *b);

#define RS_DIGEST_STR (8 + 2 * RS_MAX_DIGEST + 1)

#endif

/* An in-toto link (in-toto v0.9 metadata, as Debian's in-toto 1.3.1 and
 * in-toto-rs write it): the signatures cover the canonical JSON of
 * "signed", which lists the step's products by name and digest. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "attest/attestation.h"
#include "attest/canonical.h"

static int read_products(const json_t *products, rs_attestation *a, rs_error *err)
{
    const char *name;
    json_t *digests;

    if (!json_is_object(products))
        return rs_fail(err, "\"signed.products\" is not an object");
    if (json_object_size(products) > RS_ATTEST_MAX_PRODUCTS)
        return rs_fail(err, "more than %d products", RS_ATTEST_MAX_PRODUCTS);
    json_object_foreach((json_t *)products, name, digests) {
        const char *sha256;
        if (!json_is_object(digests))
            return rs_fail(err, "product %s: its digests are not an object", name);
        /* A product hashed only with another algorithm vouches for nothing
         * here (the service compares SHA-256), but is still signed over. */
        sha256 = json_string_value(json_object_get(digests, "sha256"));
        if (!sha256) {
            if (json_object_get(digests, "sha256"))
                return rs_fail(err, "product %s: its sha256 is not a string", name);
            continue;
        }
        if (rs_attest_add_product(a, name, sha256, err) < 0)
            return -1;
    }
    return 0;
}

int rs_attest_parse_link(const json_t *doc, rs_attestation *a, rs_error *err)
{
    const json_t *signed_part, *signatures;
    const char *type = NULL, *name = NULL;
    json_t *products = NULL;
    json_error_t jerr;

    a->kind = RS_ATTEST_LINK;
    if (json_unpack_ex((json_t *)doc, &jerr, JSON_STRICT, "{s:o, s:o}", "signed", &signed_part, "signatures",
                       &signatures) < 0)
        return rs_fail(err, "not an in-toto link: %s", jerr.text);
    if (json_unpack_ex((json_t *)signed_part, &jerr, 0, "{s:s, s:s, s:o}", "_type", &type, "name", &name,
                       "products", &products) < 0)
        return rs_fail(err, "not an in-toto link: \"signed\": %s", jerr.text);
    if (strcmp(type, "link"))
        return rs_fail(err, "\"signed._type\" is \"%.64s\", not \"link\"", type);
    if (!(a->step = strdup(name)))
        return rs_fail(err, "out of memory");
    if (rs_canonical_json(signed_part, &a->signed_bytes, err) < 0)
        return rs_error_prefix(err, "\"signed\"");
    if (read_products(products, a, err) < 0)
        return -1;
    return rs_attest_parse_signatures(signatures, false, a, err);
}

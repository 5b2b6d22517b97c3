#include "attest/attestation.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/json_values.h"
#include "crypto/ossl.h"

const char *rs_attest_kind_name(rs_attest_kind kind)
{
    return kind == RS_ATTEST_LINK ? "in-toto link" : "in-toto statement (DSSE)";
}

int rs_attest_add_product(rs_attestation *a, const char *name, const char *sha256_hex, rs_error *err)
{
    uint8_t digest[32];
    size_t len = strlen(name);
    rs_attest_product *grown;

    if (!len || len > RS_ATTEST_MAX_NAME)
        return rs_fail(err, "a product name of %zu bytes (1 to %d)", len, RS_ATTEST_MAX_NAME);
    if (strlen(sha256_hex) != 64 || strspn(sha256_hex, "0123456789abcdef") != 64 ||
        rs_unhex(sha256_hex, digest, sizeof(digest)) < 0)
        return rs_fail(err, "product %s: its sha256 is not 64 lower-case hex digits", name);
    if (a->nproducts >= RS_ATTEST_MAX_PRODUCTS)
        return rs_fail(err, "more than %d products", RS_ATTEST_MAX_PRODUCTS);
    /* Grown by doubling: a few hundred products at most in practice. */
    if ((a->nproducts & (a->nproducts - 1)) == 0) {
        grown = realloc(a->products, (a->nproducts ? 2 * a->nproducts : 1) * sizeof(*grown));
        if (!grown)
            return rs_fail(err, "out of memory");
        a->products = grown;
    }
    if (!(a->products[a->nproducts].name = strdup(name)))
        return rs_fail(err, "out of memory");
    memcpy(a->products[a->nproducts++].sha256, digest, sizeof(digest));
    return 0;
}

static int compare_products(const void *x, const void *y)
{
    return strcmp(((const rs_attest_product *)x)->name, ((const rs_attest_product *)y)->name);
}

/* A name given twice (a statement's subjects are a list) is refused, found
 * by sorting rather than by comparing every pair, which a list of many
 * thousands would make cost billions of comparisons. */
static int refuse_duplicate_products(rs_attestation *a, rs_error *err)
{
    if (a->nproducts > 1)
        qsort(a->products, a->nproducts, sizeof(*a->products), compare_products);
    for (size_t i = 1; i < a->nproducts; i++)
        if (!strcmp(a->products[i - 1].name, a->products[i].name))
            return rs_fail(err, "product %s is listed twice", a->products[i].name);
    return 0;
}

/* "signatures": [{"keyid": HEX, "sig": HEX or BASE64}], nothing else in
 * each (a member nothing checks is a place to hide a second meaning). */
int rs_attest_parse_signatures(const json_t *list, bool base64, rs_attestation *a, rs_error *err)
{
    size_t n = json_array_size(list);

    if (!json_is_array(list) || n == 0)
        return rs_fail(err, "\"signatures\" is not a non-empty list");
    if (n > RS_ATTEST_MAX_SIGNATURES)
        return rs_fail(err, "%zu signatures (at most %d)", n, RS_ATTEST_MAX_SIGNATURES);
    if (!(a->sigs = calloc(n, sizeof(*a->sigs))))
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        rs_attest_signature *s = &a->sigs[a->nsigs++];
        const char *keyid = "", *sig = NULL;
        json_error_t jerr;
        if (json_unpack_ex(json_array_get(list, i), &jerr, JSON_STRICT, base64 ? "{s?s, s:s}" : "{s:s, s:s}", "keyid",
                           &keyid, "sig", &sig) < 0)
            return rs_fail(err, "signature %zu: %s", i, jerr.text);
        if (*keyid && (strlen(keyid) != 64 || strspn(keyid, "0123456789abcdef") != 64))
            return rs_fail(err, "signature %zu: its keyid is not 64 lower-case hex digits", i);
        memcpy(s->keyid, keyid, strlen(keyid) + 1);
        if (base64) {
            if (rs_base64_decode(sig, RS_ATTEST_MAX_SIG, &s->sig, err) < 0)
                return rs_error_prefix(err, "signature %zu", i);
        } else {
            size_t len = strlen(sig);
            if (!len || len % 2 || len / 2 > RS_ATTEST_MAX_SIG || strspn(sig, "0123456789abcdef") != len)
                return rs_fail(err, "signature %zu: not lower-case hex of at most %d bytes", i, RS_ATTEST_MAX_SIG);
            if (rs_bytes_reserve(&s->sig, len / 2, err) < 0)
                return -1;
            rs_unhex(sig, s->sig.data, len / 2);
            s->sig.len = len / 2;
        }
    }
    return 0;
}

int rs_attestation_parse(const uint8_t *data, size_t len, rs_attestation *a, rs_error *err)
{
    json_error_t jerr;
    int r;

    memset(a, 0, sizeof(*a));
    if (len > RS_ATTEST_MAX_FILE)
        return rs_fail(err, "larger than %d bytes", RS_ATTEST_MAX_FILE);
    /* Duplicate members are refused: two parsers that keep different
     * copies of one member would read two different attestations. */
    _cleanup_(rs_jsonp) json_t *doc = json_loadb((const char *)data, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc)
        return rs_fail(err, "not JSON: line %d: %s", jerr.line, jerr.text);
    if (!json_is_object(doc))
        return rs_fail(err, "not an attestation: not a JSON object");
    if (json_object_get(doc, "signed"))
        r = rs_attest_parse_link(doc, a, err);
    else if (json_object_get(doc, "payloadType"))
        r = rs_attest_parse_dsse(doc, a, err);
    else
        r = rs_fail(err, "neither an in-toto link (\"signed\") nor a DSSE envelope (\"payloadType\")");
    if (r == 0)
        r = refuse_duplicate_products(a, err);
    if (r < 0)
        rs_attestation_free(a);
    return r;
}

int rs_attestation_load(const char *path, rs_attestation *a, rs_error *err)
{
    _cleanup_bytes_ rs_bytes data = { 0 };

    memset(a, 0, sizeof(*a));
    if (rs_read_file(path, RS_ATTEST_MAX_FILE, &data, err) < 0 ||
        rs_attestation_parse(data.data, data.len, a, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

void rs_attestation_free(rs_attestation *a)
{
    for (size_t i = 0; i < a->nsigs; i++)
        rs_bytes_free(&a->sigs[i].sig);
    for (size_t i = 0; i < a->nproducts; i++)
        free(a->products[i].name);
    free(a->sigs);
    free(a->products);
    free(a->step);
    rs_bytes_free(&a->signed_bytes);
    memset(a, 0, sizeof(*a));
}

int rs_attestation_verify(const rs_attestation *a, const rs_attest_key *keys, size_t nkeys, bool *signed_by,
                          size_t *distinct, rs_error *err)
{
    *distinct = 0;
    for (size_t k = 0; k < nkeys; k++)
        signed_by[k] = false;
    for (size_t s = 0; s < a->nsigs; s++) {
        for (size_t k = 0; k < nkeys; k++) {
            int ok;
            if (signed_by[k] || (a->sigs[s].keyid[0] && strcmp(a->sigs[s].keyid, keys[k].keyid)))
                continue;
            ok = rs_attest_key_verify(&keys[k], a->signed_bytes.data, a->signed_bytes.len, a->sigs[s].sig.data,
                                      a->sigs[s].sig.len, err);
            if (ok < 0)
                return -1;
            signed_by[k] = ok;
        }
    }
    /* Counted by what the keys are, not by their files or key IDs. */
    for (size_t k = 0; k < nkeys; k++) {
        bool seen = false;
        for (size_t j = 0; j < k && !seen; j++)
            seen = signed_by[j] && !strcmp(keys[j].fingerprint, keys[k].fingerprint);
        *distinct += signed_by[k] && !seen;
    }
    return 0;
}

const rs_attest_product *rs_attestation_product(const rs_attestation *a, const char *name, size_t *count)
{
    const rs_attest_product *found = NULL;
    size_t len = strlen(name);

    *count = 0;
    for (size_t i = 0; i < a->nproducts; i++) {
        const char *p = a->products[i].name;
        size_t plen = strlen(p);
        if (plen < len || strcmp(p + plen - len, name) || (plen > len && p[plen - len - 1] != '/'))
            continue;
        found = found ? found : &a->products[i];
        (*count)++;
    }
    return found;
}

rs_attest_vouch rs_attestation_vouches(const rs_attestation *a, const char *name, const uint8_t sha256[32],
                                       const rs_attest_product **listed)
{
    size_t count;

    *listed = rs_attestation_product(a, name, &count);
    if (!*listed)
        return RS_VOUCH_ABSENT;
    if (count > 1)
        return RS_VOUCH_AMBIGUOUS;
    return memcmp((*listed)->sha256, sha256, 32) ? RS_VOUCH_OTHER_DIGEST : RS_VOUCH_YES;
}

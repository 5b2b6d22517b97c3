/* An in-toto Statement v1 in a DSSE envelope: the signatures cover the
 * envelope's pre-authentication encoding of the payload's exact bytes,
 * so the payload is parsed as received and never re-encoded. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attest/attestation.h"
#include "base/json_values.h"
#include "crypto/ossl.h"

/* DSSE's PAE: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, the
 * lengths in ASCII decimal. */
static int pae(const char *type, const rs_bytes *body, rs_bytes *out, rs_error *err)
{
    char head[64];

    snprintf(head, sizeof(head), "DSSEv1 %zu ", strlen(type));
    if (rs_bytes_append(out, head, strlen(head), err) < 0 || rs_bytes_append(out, type, strlen(type), err) < 0)
        return -1;
    snprintf(head, sizeof(head), " %zu ", body->len);
    if (rs_bytes_append(out, head, strlen(head), err) < 0)
        return -1;
    return rs_bytes_append(out, body->data, body->len, err);
}

static int is_statement_type(const char *type)
{
    return !strcmp(type, "https://in-toto.io/Statement/v1") || !strcmp(type, "https://in-toto.io/Statement/v0.1");
}

static int read_subjects(const json_t *subjects, rs_attestation *a, rs_error *err)
{
    size_t n = json_array_size(subjects);

    if (!json_is_array(subjects) || n == 0)
        return rs_fail(err, "the statement's \"subject\" is not a non-empty list");
    if (n > RS_ATTEST_MAX_PRODUCTS)
        return rs_fail(err, "more than %d subjects", RS_ATTEST_MAX_PRODUCTS);
    for (size_t i = 0; i < n; i++) {
        const char *name = NULL, *sha256 = NULL;
        json_t *digest = NULL;
        json_error_t jerr;
        if (json_unpack_ex(json_array_get(subjects, i), &jerr, 0, "{s:s, s:o}", "name", &name, "digest", &digest) < 0 ||
            !json_is_object(digest))
            return rs_fail(err, "subject %zu: not {\"name\", \"digest\": {...}}", i);
        if (!json_object_get(digest, "sha256"))
            continue;   /* as in a link: no SHA-256, nothing vouched for here */
        if (!(sha256 = json_string_value(json_object_get(digest, "sha256"))))
            return rs_fail(err, "subject %s: its sha256 is not a string", name);
        if (rs_attest_add_product(a, name, sha256, err) < 0)
            return -1;
    }
    return 0;
}

int rs_attest_parse_dsse(const json_t *doc, rs_attestation *a, rs_error *err)
{
    const char *type = NULL, *payload = NULL, *stype = NULL, *predicate = NULL;
    json_t *signatures = NULL, *subjects = NULL;
    _cleanup_bytes_ rs_bytes body = { 0 };
    json_error_t jerr;

    a->kind = RS_ATTEST_STATEMENT;
    if (json_unpack_ex((json_t *)doc, &jerr, JSON_STRICT, "{s:s, s:s, s:o}", "payloadType", &type, "payload",
                       &payload, "signatures", &signatures) < 0)
        return rs_fail(err, "not a DSSE envelope: %s", jerr.text);
    if (strcmp(type, RS_DSSE_INTOTO_TYPE))
        return rs_fail(err, "the envelope's payloadType is \"%.64s\", not \"%s\"", type, RS_DSSE_INTOTO_TYPE);
    if (rs_base64_decode(payload, RS_ATTEST_MAX_FILE, &body, err) < 0)
        return rs_error_prefix(err, "the envelope's payload");
    _cleanup_(rs_jsonp) json_t *statement = json_loadb((const char *)body.data, body.len, JSON_REJECT_DUPLICATES,
                                                       &jerr);
    if (!statement)
        return rs_fail(err, "the envelope's payload is not JSON: %s", jerr.text);
    if (json_unpack_ex(statement, &jerr, 0, "{s:s, s:o, s:s}", "_type", &stype, "subject", &subjects,
                       "predicateType", &predicate) < 0)
        return rs_fail(err, "the payload is not an in-toto statement: %s", jerr.text);
    if (!is_statement_type(stype))
        return rs_fail(err, "the payload's _type is \"%.64s\", not an in-toto Statement", stype);
    if (!(a->step = strdup(predicate)))
        return rs_fail(err, "out of memory");
    if (read_subjects(subjects, a, err) < 0 || pae(type, &body, &a->signed_bytes, err) < 0)
        return -1;
    return rs_attest_parse_signatures(signatures, true, a, err);
}

/* A rebuilder's attestation and key files: both come from outside (a
 * directory the operator fills from rebuilders, who may be hostile). What
 * the parser accepts must hold within its bounds: at most 16 signatures,
 * products with non-empty names listed once each, key IDs of 64 hex digits
 * or none; canonical JSON must be a fixed point (its own canonical form)
 * whenever it is JSON at all;
 * and verifying with in-toto's ed25519 test key must not crash. The same
 * bytes are also tried as a key file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/attest_vectors.h"
#include "attest/attestation.h"
#include "attest/canonical.h"
#include "base/json_values.h"

static void check_canonical_fixed_point(const rs_bytes *canon)
{
    json_error_t jerr;
    rs_bytes again = { 0 };
    rs_error err;
    json_t *v = json_loadb((const char *)canon->data, canon->len, JSON_REJECT_DUPLICATES, &jerr);

    /* Canonical JSON writes control characters raw, which JSON itself does
     * not allow: such a form is no JSON to read back, and that is right. */
    if (!v)
        return;
    if (rs_canonical_json(v, &again, &err) < 0 || again.len != canon->len ||
        memcmp(again.data, canon->data, canon->len))
        abort();
    json_decref(v);
    rs_bytes_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static rs_attest_key key;
    static int loaded;
    rs_attestation a;
    rs_attest_key k;
    rs_error err;
    bool by;
    size_t distinct;

    if (!loaded++ && rs_attest_key_parse((const uint8_t *)VECTOR_KEY_ED25519, strlen(VECTOR_KEY_ED25519), &key,
                                         &err) < 0)
        abort();
    if (rs_attest_key_parse(data, size, &k, &err) == 0) {
        if (strlen(k.keyid) != 64 || strlen(k.fingerprint) != 64)
            abort();
        rs_attest_key_clear(&k);
    }
    if (rs_attestation_parse(data, size, &a, &err) < 0)
        return 0;
    if (!a.nsigs || a.nsigs > RS_ATTEST_MAX_SIGNATURES || !a.signed_bytes.len || !a.step)
        abort();
    for (size_t i = 0; i < a.nsigs; i++)
        if ((a.sigs[i].keyid[0] && strlen(a.sigs[i].keyid) != 64) || a.sigs[i].sig.len > RS_ATTEST_MAX_SIG)
            abort();
    for (size_t i = 0; i < a.nproducts; i++)
        if (!a.products[i].name[0] || (i && strcmp(a.products[i - 1].name, a.products[i].name) >= 0))
            abort();
    if (a.kind == RS_ATTEST_LINK)
        check_canonical_fixed_point(&a.signed_bytes);
    if (rs_attestation_verify(&a, &key, 1, &by, &distinct, &err) < 0 || distinct > 1)
        abort();
    rs_attestation_free(&a);
    return 0;
}

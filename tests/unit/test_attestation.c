/* Rebuilders' attestations, without in-toto or the network: in-toto's own
 * links (ed25519, RSASSA-PSS, ECDSA P-256) and a DSSE envelope verify with
 * their keys, whose key IDs are computed as in-toto computes them; any
 * altered byte of what is signed, another key, a duplicate subject, a
 * wrong payload type and every bound are refused; canonical JSON is byte
 * for byte securesystemslib's; a key given twice counts once. */
#include <stdlib.h>
#include <string.h>

#include "attest/attestation.h"
#include "attest/canonical.h"
#include "attest/rebuild_policy.h"
#include "attest_vectors.h"
#include "base/json_values.h"
#include "crypto/ossl.h"
#include "harness.h"

static int load_key(const char *text, rs_attest_key *k)
{
    rs_error err;
    int r = rs_attest_key_parse((const uint8_t *)text, strlen(text), k, &err);
    if (r < 0)
        fprintf(stderr, "key: %s\n", err.msg);
    return r;
}

static int parse(const char *text, rs_attestation *a, rs_error *err)
{
    return rs_attestation_parse((const uint8_t *)text, strlen(text), a, err);
}

/* How many distinct keys of `keys` signed `text` (-1: not parsed). */
static long signers(const char *text, const rs_attest_key *keys, size_t n)
{
    rs_attestation a;
    bool by[8];
    size_t distinct;
    rs_error err;

    if (parse(text, &a, &err) < 0)
        return -1;
    long r = rs_attestation_verify(&a, keys, n, by, &distinct, &err) < 0 ? -1 : (long)distinct;
    rs_attestation_free(&a);
    return r;
}

/* text with the first occurrence of `from` replaced by `to`. */
static char *replaced(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    size_t len = strlen(text) - strlen(from) + strlen(to);
    char *out = malloc(len + 1);

    if (!at || !out)
        abort();
    memcpy(out, text, (size_t)(at - text));
    strcpy(out + (at - text), to);
    strcat(out, at + strlen(from));
    return out;
}

static void in_totos_links(void)
{
    const char *keys_text[] = { VECTOR_KEY_ED25519, VECTOR_KEY_RSA, VECTOR_KEY_ECDSA };
    const char *links[] = { VECTOR_LINK_ED25519, VECTOR_LINK_RSA, VECTOR_LINK_ECDSA, VECTOR_DSSE_ED25519 };
    rs_attest_key keys[3];

    for (int i = 0; i < 3; i++)
        CHECK(load_key(keys_text[i], &keys[i]) == 0);
    for (int i = 0; i < 4; i++) {
        int own = i == 3 ? 0 : i;
        rs_attest_key other = keys[(own + 1) % 3];
        rs_attestation a;
        rs_error err;
        CHECK(signers(links[i], &keys[own], 1) == 1);
        CHECK(signers(links[i], &other, 1) == 0);
        /* The key ID in-toto wrote is the one computed here. */
        if (i < 3 && parse(links[i], &a, &err) == 0) {
            CHECK(!strcmp(a.sigs[0].keyid, keys[own].keyid));
            CHECK(a.nproducts == 1 && !strcmp(a.products[0].name, "shim-unsigned_16.1-1_amd64.deb"));
            rs_attestation_free(&a);
        }
    }
    /* One key three times: one signer. */
    rs_attest_key same[3] = { keys[0], keys[0], keys[0] };
    CHECK(signers(VECTOR_LINK_ED25519, same, 3) == 1);
    /* What is signed, altered: a digit of the product's digest, the step's
     * name, the command's order. Whitespace outside it is not signed. */
    char *digest = replaced(VECTOR_LINK_ED25519, "\"sha256\": \"", "\"sha256\": \"0");
    CHECK(signers(digest, keys, 1) <= 0);
    char *name = replaced(VECTOR_LINK_ED25519, "\"name\": \"rebuild\"", "\"name\": \"rebuilt\"");
    CHECK(signers(name, keys, 1) == 0);
    char *order = replaced(VECTOR_LINK_ED25519, "\"true\",\n   \"rebuild\"", "\"rebuild\",\n   \"true\"");
    CHECK(signers(order, keys, 1) == 0);
    char *spaced = replaced(VECTOR_LINK_ED25519, "\"signed\": {", "\"signed\"  :\n\n  {");
    CHECK(signers(spaced, keys, 1) == 1);
    char *payload = replaced(VECTOR_DSSE_ED25519, "\"payload\": \"ey", "\"payload\": \"ew");
    CHECK(signers(payload, keys, 1) <= 0);
    free(digest), free(name), free(order), free(spaced), free(payload);
    for (int i = 0; i < 3; i++)
        rs_attest_key_clear(&keys[i]);
}

static void canonical(void)
{
    rs_bytes out = { 0 };
    rs_error err;
    json_error_t jerr;
    json_t *v = json_loads("{\"b\": [1, -2, true, false, null], \"a\": \"x\\\"y\\\\z\\n\\u00e9\", \"\\u00e9\": {}, "
                           "\"B\": []}",
                           0, &jerr);
    const char *want = "{\"B\":[],\"a\":\"x\\\"y\\\\z\n\xc3\xa9\",\"b\":[1,-2,true,false,null],\"\xc3\xa9\":{}}";

    CHECK(v && rs_canonical_json(v, &out, &err) == 0);
    CHECK(out.len == strlen(want) && !memcmp(out.data, want, out.len));
    json_decref(v);
    rs_bytes_free(&out);
    v = json_loads("{\"a\": 1.5}", 0, &jerr);
    CHECK(rs_canonical_json(v, &out, &err) < 0 && strstr(err.msg, "real number"));
    json_decref(v);
    rs_bytes_free(&out);
    /* Nesting past the bound is refused, not recursed into. */
    char deep[200] = "";
    for (int i = 0; i < 40; i++)
        strcat(deep, "[");
    for (int i = 0; i < 40; i++)
        strcat(deep, "]");
    v = json_loads(deep, 0, &jerr);
    CHECK(v && rs_canonical_json(v, &out, &err) < 0 && strstr(err.msg, "deeper"));
    json_decref(v);
    rs_bytes_free(&out);
}

static int refused(const char *text, const char *why)
{
    rs_attestation a;
    rs_error err;

    if (parse(text, &a, &err) == 0) {
        rs_attestation_free(&a);
        fprintf(stderr, "accepted: %s\n", text);
        return 0;
    }
    if (!strstr(err.msg, why))
        fprintf(stderr, "refused for another reason: %s\n", err.msg);
    return strstr(err.msg, why) != NULL;
}

static void refusals(void)
{
    const char *sig = "{\"keyid\": \"" "0000000000000000000000000000000000000000000000000000000000000000" "\", \"sig\": \"00\"}";
    char many[4096], dup[512];

    CHECK(refused("{\"signed\": {\"_type\": \"layout\", \"name\": \"x\", \"products\": {}}, \"signatures\": []}",
                  "not \"link\""));
    CHECK(refused("{\"signed\": {\"_type\": \"link\", \"name\": \"x\", \"products\": {}}, \"signatures\": [], \"x\": 1}",
                  "not an in-toto link"));
    CHECK(refused("{\"signed\": {\"_type\": \"link\", \"name\": \"x\", \"products\": {}}, \"signatures\": []}",
                  "non-empty"));
    CHECK(refused("{\"signed\": {\"_type\": \"link\", \"name\": \"x\", \"products\": {\"a\": {\"sha256\": \"AB\"}}}, "
                  "\"signatures\": []}",
                  "64 lower-case hex"));
    CHECK(refused("{\"signed\": {\"_type\": \"link\", \"_type\": \"link\"}, \"signatures\": []}", "not JSON"));
    snprintf(many, sizeof(many), "{\"signed\": {\"_type\": \"link\", \"name\": \"x\", \"products\": {}}, \"signatures\": [");
    for (int i = 0; i <= RS_ATTEST_MAX_SIGNATURES; i++)
        strcat(strcat(many, i ? ", " : ""), sig);
    strcat(many, "]}");
    CHECK(refused(many, "at most 16"));
    snprintf(dup, sizeof(dup),
             "{\"payloadType\": \"" RS_DSSE_INTOTO_TYPE "\", \"payload\": \"%s\", \"signatures\": [{\"sig\": \"AA==\"}]}",
             /* {"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"a","digest":{"sha256":"00..."}} x2],"predicateType":"p"} */
             "eyJfdHlwZSI6Imh0dHBzOi8vaW4tdG90by5pby9TdGF0ZW1lbnQvdjEiLCJzdWJqZWN0IjpbeyJuYW1lIjoiYSIsImRpZ2VzdCI6eyJzaGEyNTYiOiIwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwIn19LHsibmFtZSI6ImEiLCJkaWdlc3QiOnsic2hhMjU2IjoiMTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMSJ9fV0sInByZWRpY2F0ZVR5cGUiOiJwIn0=");
    CHECK(refused(dup, "listed twice"));
    char *type = replaced(VECTOR_DSSE_ED25519, RS_DSSE_INTOTO_TYPE, "application/json");
    CHECK(refused(type, "payloadType"));
    free(type);
}

static void products(void)
{
    rs_attestation a = { 0 };
    rs_error err;
    size_t n;
    const char *hex = "0000000000000000000000000000000000000000000000000000000000000000";

    CHECK(rs_attest_add_product(&a, "out/shim_1_amd64.deb", hex, &err) == 0);
    CHECK(rs_attest_add_product(&a, "xshim_1_amd64.deb", hex, &err) == 0);
    CHECK(rs_attestation_product(&a, "shim_1_amd64.deb", &n) && n == 1);
    CHECK(!rs_attestation_product(&a, "him_1_amd64.deb", &n) && n == 0);
    CHECK(rs_attestation_product(&a, "xshim_1_amd64.deb", &n) && n == 1);
    /* Vouching: the name and the digest, both. */
    const rs_attest_product *p;
    uint8_t zero[32] = { 0 }, one[32] = { 1 };
    CHECK(rs_attestation_vouches(&a, "shim_1_amd64.deb", zero, &p) == RS_VOUCH_YES && p);
    CHECK(rs_attestation_vouches(&a, "shim_1_amd64.deb", one, &p) == RS_VOUCH_OTHER_DIGEST && p);
    CHECK(rs_attestation_vouches(&a, "shim_2_amd64.deb", zero, &p) == RS_VOUCH_ABSENT && !p);
    CHECK(rs_attest_add_product(&a, "in/shim_1_amd64.deb", hex, &err) == 0);
    CHECK(rs_attestation_vouches(&a, "shim_1_amd64.deb", zero, &p) == RS_VOUCH_AMBIGUOUS);
    rs_attestation_free(&a);
}

static void keys(void)
{
    rs_attest_key k;

    CHECK(load_key(VECTOR_KEY_ED25519, &k) == 0);
    CHECK(!strcmp(k.keyid, "5f03f482a733ab5c125d4b547efdfd1419181410184242bc730a81d435db841c"));
    rs_attest_key_clear(&k);
    char *wrong = replaced(VECTOR_KEY_ED25519, "\"keytype\": \"ed25519\"", "\"keytype\": \"rsa\"");
    rs_error err;
    CHECK(rs_attest_key_parse((const uint8_t *)wrong, strlen(wrong), &k, &err) < 0);
    free(wrong);
}

/* The policy over a directory laid out as docs/rebuilds.md says, with
 * in-toto's own links: k of n counted by rebuilder, a rebuilder's file
 * checked with its own keys only, another digest a refusal, two names
 * for one key refused. */
static void policy(void)
{
    char dir[] = "/tmp/test_attestation.XXXXXX";
    const char *pool = "shim-unsigned_16.1-1_amd64.deb";
    uint8_t sha[32], other[32];
    rs_rebuild_policy p;
    rs_error err;

    if (!mkdtemp(dir))
        abort();
    harness_mkdir(dir, "keys");
    harness_mkdir(dir, "att");
    harness_mkdir(dir, "att/alice");
    harness_mkdir(dir, "att/bob");
    harness_mkdir(dir, "att/carol");
    harness_put(dir, "keys/ed.json", VECTOR_KEY_ED25519);
    harness_put(dir, "keys/rsa.pem", VECTOR_KEY_RSA);
    harness_put(dir, "keys/ec.json", VECTOR_KEY_ECDSA);
    harness_put(dir, "att/alice/shim-unsigned_16.1-1_amd64.deb.link", VECTOR_LINK_ED25519);
    harness_put(dir, "att/bob/shim-unsigned_16.1-1_amd64.deb.link", VECTOR_LINK_ECDSA);   /* carol's key */
    harness_put(dir, "att/carol/other_1_amd64.deb.link", VECTOR_LINK_ECDSA);
    rs_sha256(VECTOR_PRODUCT, strlen(VECTOR_PRODUCT), sha);
    memcpy(other, sha, sizeof(other));
    other[0] ^= 1;

    rs_rebuild_policy_init(&p);
    CHECK(rs_rebuild_policy_add_key(&p, "alice", harness_path(dir, "keys/ed.json"), &err) == 0);
    CHECK(rs_rebuild_policy_add_key(&p, "bob", harness_path(dir, "keys/rsa.pem"), &err) == 0);
    CHECK(rs_rebuild_policy_add_key(&p, "carol", harness_path(dir, "keys/ec.json"), &err) == 0);
    CHECK(rs_rebuild_policy_open_dir(&p, harness_path(dir, "att"), &err) == 0);
    p.required = 1;
    CHECK(rs_rebuild_policy_check(&p, &err) == 0);
    CHECK(rs_rebuild_require(&p, pool, sha, &err) == 0);
    p.required = 2;   /* bob's directory holds carol's link; carol's names another package */
    CHECK(rs_rebuild_require(&p, pool, sha, &err) < 0 && err.transient &&
          strstr(err.msg, "1 of the 2 rebuilds required are attested (by: alice; missing: bob, carol)"));
    harness_put(dir, "att/carol/shim-unsigned_16.1-1_amd64.deb.intoto.json", VECTOR_LINK_ECDSA);
    CHECK(rs_rebuild_require(&p, pool, sha, &err) == 0);
    /* The .deb about to be signed is not what they rebuilt: refused. */
    p.required = 1;
    CHECK(rs_rebuild_require(&p, pool, other, &err) < 0 && !err.transient &&
          strstr(err.msg, "refused, never to be signed: rebuilder"));
    rs_rebuild_policy_free(&p);

    rs_rebuild_policy_init(&p);
    CHECK(rs_rebuild_policy_add_spec(&p, "alice=", &err) < 0 && strstr(err.msg, "NAME=KEYFILE"));
    CHECK(rs_rebuild_policy_add_spec(&p, "../x=y", &err) < 0 && strstr(err.msg, "is not 1 to 64"));
    char spec[256];
    snprintf(spec, sizeof(spec), "alias=%s", harness_path(dir, "keys/ed.json"));
    CHECK(rs_rebuild_policy_add_key(&p, "alice", harness_path(dir, "keys/ed.json"), &err) == 0);
    CHECK(rs_rebuild_policy_add_spec(&p, spec, &err) == 0);
    CHECK(rs_rebuild_policy_open_dir(&p, harness_path(dir, "att"), &err) == 0);
    p.required = 1;
    CHECK(rs_rebuild_policy_check(&p, &err) < 0 && strstr(err.msg, "have the same key"));
    rs_rebuild_policy_free(&p);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

int main(void)
{
    in_totos_links();
    canonical();
    refusals();
    products();
    keys();
    policy();
    return harness_finish("test_attestation");
}

/* reprosign attestation verify: checks one rebuilder's attestation against
 * the keys given and, optionally, the file it should vouch for, and says
 * who attested what. */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attest/attestation.h"
#include "base/bytes.h"
#include "base/file.h"
#include "base/json_values.h"
#include "cli/cli.h"

static int run(int argc, char **argv);

/* Rebuilders sign with one key each; a policy names a handful. */
#define MAX_KEYS 64

static const struct option longopts[] = {
    { "key", required_argument, NULL, 'k' },
    { "product", required_argument, NULL, 'p' },
    { "json", no_argument, NULL, 'j' },
    { "help", no_argument, NULL, 'h' },
    { 0 },
};

static const rs_optdoc attestation_docs[] = {
    { "key", "KEYFILE", "A rebuilder's public key: in-toto's JSON key file (ed25519, ecdsa) or a PEM\n"
                        "public key (RSA, signing with RSASSA-PSS); may repeat.", NULL },
    { "product", "PATH", "The file the attestation must vouch for: a product named as PATH's file\n"
                         "name must be listed with PATH's SHA-256.", NULL },
    { "json", NULL, "Print the result as one JSON document (docs/json.md).", NULL },
    { 0 },
};

const rs_command cmd_attestation = {
    .name = "attestation",
    .summary = "check a rebuilder's in-toto attestation: who signed it, what it vouches for",
    .usage = "attestation verify FILE --key KEYFILE... [--product PATH] [--json]\n\n"
             "FILE is an in-toto link (as in-toto-run and rebuilderd write them, signed over\n"
             "the canonical JSON of \"signed\") or an in-toto Statement in a DSSE envelope.\n"
             "It succeeds when a signature by at least one of the keys verifies and, with\n"
             "--product, the attestation lists PATH's file name with PATH's SHA-256. Keys\n"
             "are counted by what they are: one key given twice, or under two key IDs,\n"
             "counts once (docs/rebuilds.md).",
    .run = run,
    .options = longopts,
    .optdocs = attestation_docs,
    .verbs = "verify",
    .example = "reprosign attestation verify rebuild.0056cee5.link --key alice.pub --product shim_16.1-1_amd64.deb",
};

typedef struct args {
    const char *file, *product;
    const char *key_paths[MAX_KEYS];
    size_t nkeys;
    bool json;
} args;

typedef struct product_check {
    rs_attest_vouch vouch;
    const rs_attest_product *attested;   /* the product bearing PATH's file name, if any */
    uint8_t actual[32];
} product_check;

static int check_product(const rs_attestation *a, const char *path, product_check *pc, rs_error *err)
{
    _cleanup_free_ char *copy = strdup(path);

    if (!copy)
        return rs_fail(err, "out of memory");
    if (rs_file_sha256(path, pc->actual, NULL, err) < 0)
        return -1;
    pc->vouch = rs_attestation_vouches(a, basename(copy), pc->actual, &pc->attested);
    return 0;
}

static bool product_ok(const product_check *pc)
{
    return pc->vouch == RS_VOUCH_YES;
}

static json_t *signers_json(const args *a, const rs_attest_key *keys, const bool *signed_by)
{
    json_t *list = json_array();

    for (size_t i = 0; i < a->nkeys; i++)
        if (signed_by[i])
            json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:o}", "key", a->key_paths[i], "key_id",
                                                  keys[i].keyid, "scheme", rs_attest_scheme_name(keys[i].scheme),
                                                  "fingerprint", rs_json_digest_hex("sha256", keys[i].fingerprint)));
    return list;
}

static int print_json(const args *a, const rs_attestation *att, const rs_attest_key *keys, const bool *signed_by,
                      size_t distinct, const product_check *pc, bool valid)
{
    json_t *products = json_array(), *doc;

    for (size_t i = 0; i < att->nproducts; i++)
        json_array_append_new(products, json_pack("{s:s, s:o}", "name", att->products[i].name, "digest",
                                                  rs_json_digest("sha256", att->products[i].sha256, 32)));
    doc = json_pack("{s:s, s:s, s:s, s:o, s:I, s:I, s:o}", "file", a->file, "format",
                    att->kind == RS_ATTEST_LINK ? "link" : "dsse-statement", "step", att->step, "signers",
                    signers_json(a, keys, signed_by), "distinct_keys", (json_int_t)distinct, "signatures",
                    (json_int_t)att->nsigs, "products", products);
    if (a->product) {
        json_t *p = json_pack("{s:s, s:o, s:b}", "path", a->product, "digest",
                              rs_json_digest("sha256", pc->actual, 32), "match", product_ok(pc));
        if (pc->vouch == RS_VOUCH_YES || pc->vouch == RS_VOUCH_OTHER_DIGEST)
            rs_json_set(p, "attested", rs_json_digest("sha256", pc->attested->sha256, 32));
        rs_json_set(doc, "product", p);
    }
    rs_json_set(doc, "valid", json_boolean(valid));
    return cli_json_print(doc);
}

static void print_text(const args *a, const rs_attestation *att, const rs_attest_key *keys, const bool *signed_by,
                       size_t distinct)
{
    char hex[65];

    printf("%s: %s, step \"%s\", %zu product%s, %zu signature%s, by %zu distinct key%s given\n", a->file,
           rs_attest_kind_name(att->kind), att->step, att->nproducts, att->nproducts == 1 ? "" : "s", att->nsigs,
           att->nsigs == 1 ? "" : "s", distinct, distinct == 1 ? "" : "s");
    for (size_t i = 0; i < a->nkeys; i++)
        if (signed_by[i])
            printf("  signed by %s key %s (%s), fingerprint %s\n", rs_attest_scheme_name(keys[i].scheme),
                   keys[i].keyid, a->key_paths[i], keys[i].fingerprint);
    for (size_t i = 0; i < att->nproducts; i++) {
        rs_hex(att->products[i].sha256, 32, hex);
        printf("  product %s sha256:%s\n", att->products[i].name, hex);
    }
}

/* Why the product does not fit, as the error line says it. */
static int product_failure(const args *a, const product_check *pc, rs_error *err)
{
    char want[65], got[65];

    _cleanup_free_ char *copy = strdup(a->product);

    rs_hex(pc->actual, 32, got);
    if (pc->vouch == RS_VOUCH_ABSENT)
        return rs_fail(err, "%s: no product is named %s (%s)", a->file, copy ? basename(copy) : a->product,
                       a->product);
    if (pc->vouch == RS_VOUCH_AMBIGUOUS)
        return rs_fail(err, "%s: several products end in the name of %s: which one vouches is ambiguous", a->file,
                       a->product);
    rs_hex(pc->attested->sha256, 32, want);
    return rs_fail(err, "%s: attests %s as sha256:%s, but %s is sha256:%s", a->file, pc->attested->name, want,
                   a->product, got);
}

static int verify(const args *a)
{
    _cleanup_(rs_attestation_free) rs_attestation att = { 0 };
    rs_attest_key keys[MAX_KEYS] = { 0 };
    bool signed_by[MAX_KEYS];
    product_check pc = { 0 };
    size_t loaded = 0, distinct = 0;
    rs_error err;
    int status = EXIT_FAIL;

    for (; loaded < a->nkeys; loaded++)
        if (rs_attest_key_load(a->key_paths[loaded], &keys[loaded], &err) < 0)
            goto out;
    if (rs_attestation_load(a->file, &att, &err) < 0 ||
        rs_attestation_verify(&att, keys, a->nkeys, signed_by, &distinct, &err) < 0 ||
        (a->product && check_product(&att, a->product, &pc, &err) < 0))
        goto out;
    bool valid = distinct > 0 && (!a->product || product_ok(&pc));
    if (a->json)
        print_json(a, &att, keys, signed_by, distinct, &pc, valid);
    else
        print_text(a, &att, keys, signed_by, distinct);
    if (!distinct)
        rs_fail(&err, "%s: no signature by any of the %zu key%s given verifies", a->file, a->nkeys,
                a->nkeys == 1 ? "" : "s");
    else if (a->product && !product_ok(&pc))
        product_failure(a, &pc, &err);
    else
        status = EXIT_OK;
out:
    for (size_t i = 0; i < loaded; i++)
        rs_attest_key_clear(&keys[i]);
    return status == EXIT_OK ? EXIT_OK : cli_fail(&err);
}

static int run(int argc, char **argv)
{
    args a = { 0 };
    int c;

    if (argc < 2 || strcmp(argv[1], "verify"))
        return argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
                   ? (cli_help(&cmd_attestation), EXIT_OK)
                   : cli_usage(&cmd_attestation, "expected 'verify'");
    argc--, argv++;
    while ((c = cli_getopt(&cmd_attestation, argc, argv, "", longopts)) != -1) {
        switch (c) {
        case 'k':
            if (a.nkeys == MAX_KEYS)
                return cli_usage(&cmd_attestation, "at most %d --key", MAX_KEYS);
            a.key_paths[a.nkeys++] = optarg;
            break;
        case 'p': a.product = optarg; break;
        case 'j': a.json = true; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc || !a.nkeys)
        return cli_usage(&cmd_attestation, "expected one FILE and at least one --key");
    a.file = argv[optind];
    return verify(&a);
}

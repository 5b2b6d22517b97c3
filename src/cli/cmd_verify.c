#include <stdio.h>

#include "cli/cli.h"
#include "ops/ops.h"

static int run(int argc, char **argv);

const rs_command cmd_verify = {
    .name = "verify",
    .summary = "verify a file's signatures against trusted certificates",
    .usage = "verify FILE --cert CA [--cert CA...] [--json]\n\n"
             "Exits 0 only if at least one signature chains to a given certificate (as\n"
             "firmware does: any certificate may be the anchor, validity dates are\n"
             "ignored) and binds to the file's own digest.",
    .run = run,
};

static json_t *report_json(const rs_verify_report *r, size_t i)
{
    char want[RS_DIGEST_STR] = "", have[RS_DIGEST_STR] = "";

    if (r->expected.len)
        rs_digest_format(&r->expected, want, sizeof(want));
    if (r->actual.len)
        rs_digest_format(&r->actual, have, sizeof(have));
    return json_pack("{s:I, s:b, s:s?, s:s?, s:s?, s:s?, s:s?}", "index", (json_int_t)i, "valid", r->ok, "signer",
                     r->signer, "anchor", r->anchor, "signed_digest", want[0] ? want : NULL, "image_digest",
                     have[0] ? have : NULL, "reason", r->ok ? NULL : r->reason);
}

static int print_json(const char *path, const rs_verification *v)
{
    json_t *sigs = json_array();

    for (size_t i = 0; i < v->count; i++)
        json_array_append_new(sigs, report_json(&v->reports[i], i));
    if (cli_json_print(json_pack("{s:s, s:s, s:b, s:o}", "file", path, "format", v->format, "valid", v->ok,
                                 "signatures", sigs)) != EXIT_OK)
        return EXIT_FAIL;
    return v->ok ? EXIT_OK : EXIT_FAIL;
}

static int print_text(const char *path, const rs_verification *v)
{
    if (v->count == 0) {
        fprintf(stderr, "reprosign: %s: not signed\n", path);
        return EXIT_FAIL;
    }
    for (size_t i = 0; i < v->count; i++) {
        const rs_verify_report *r = &v->reports[i];

        if (r->ok)
            printf("signature %zu: OK, signed by %s, chains to %s\n", i, r->signer ? r->signer : "?",
                   r->anchor ? r->anchor : "?");
        else
            printf("signature %zu: FAILED: %s\n", i, r->reason);
    }
    if (!v->ok)
        fprintf(stderr, "reprosign: %s: no signature verifies\n", path);
    return v->ok ? EXIT_OK : EXIT_FAIL;
}

static int run(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "cert", required_argument, NULL, 'c' },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { 0 },
    };
    _cleanup_trust_ rs_trust trust = { 0 };
    _cleanup_(rs_verification_free) rs_verification v = { 0 };
    bool json = false, have_cert = false;
    rs_error err;
    int c;

    if (rs_trust_init(&trust, &err) < 0)
        return cli_fail(&err);
    while ((c = cli_getopt(&cmd_verify, argc, argv, "c:jh", longopts)) != -1) {
        switch (c) {
        case 'c':
            if (rs_trust_add_file(&trust, optarg, &err) < 0)
                return cli_fail(&err);
            have_cert = true;
            break;
        case 'j': json = true; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc)
        return cli_usage(&cmd_verify, "expected exactly one FILE");
    if (!have_cert)
        return cli_usage(&cmd_verify, "--cert is required");
    if (rs_op_verify(argv[optind], &trust, &v, &err) < 0)
        return cli_fail(&err);
    return json ? print_json(argv[optind], &v) : print_text(argv[optind], &v);
}

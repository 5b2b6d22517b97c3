#include <stdio.h>

#include "cli/cli.h"
#include "ops/ops.h"
#include "uefi/dbverify.h"
#include "uefi/uefi_trust.h"

static int run(int argc, char **argv);

static const struct option longopts[] = {
    { "cert", required_argument, NULL, 'c' },
    { "db", required_argument, NULL, 'd' },
    { "dbx", required_argument, NULL, 'x' },
    { "vars", required_argument, NULL, 'v' },
    { "efivars", required_argument, NULL, 'E' },
    { "json", no_argument, NULL, 'j' },
    { "help", no_argument, NULL, 'h' },
    { 0 },
};

static const rs_optdoc verify_docs[] = {
    { "cert", "CA",
      "A trusted certificate (PEM or DER); may be repeated.",
      NULL },
    { "db", "ESL",
      "An EFI signature list of allowed certificates and hashes; may be repeated.",
      NULL },
    { "dbx", "ESL",
      "An EFI signature list of revoked certificates and hashes; may be repeated.",
      NULL },
    { "vars", "VARSTORE",
      "An OVMF variable store whose db and dbx are used.",
      NULL },
    { "efivars", "DIR",
      "A running machine's db and dbx: /sys/firmware/efi/efivars, or a copy of its\n"
      "NAME-GUID files.",
      NULL },
    { "json", NULL,
      "Print the result as one JSON document (see docs/json.md).",
      NULL },
    { 0 },
};

const rs_command cmd_verify = {
    .name = "verify",
    .summary = "verify a file's signatures against trusted certificates",
    .usage = "verify FILE (--cert CA... | --db ESL... [--dbx ESL...] | --vars VARSTORE | --efivars DIR) [--json]\n\n"
             "Exits 0 only if at least one signature chains to a given certificate (as\n"
             "firmware does: any certificate may be the anchor, validity dates are\n"
             "ignored) and binds to the file's own digest.\n\n"
             "With --db/--dbx (EFI signature lists), --vars (an OVMF variable store's db\n"
             "and dbx) or --efivars (a running machine's) the firmware's rules apply: the\n"
             "image hash or any signature's certificate in dbx rejects the image; a\n"
             "signature chaining to a db certificate, or the image hash in db, admits it\n"
             "(also when unsigned).\n\n"
             "A compressed module (name.ko.xz, .ko.zst, .ko.gz) is verified decompressed,\n"
             "as the kernel verifies it.",
    .run = run,
    .optdocs = verify_docs,
    .example = "reprosign verify shimx64.efi.signed --vars /usr/share/OVMF/OVMF_VARS_4M.ms.fd",
    .options = longopts,
};

/* Members that are not known for a signature are left out (docs/json.md). */
static json_t *report_json(const rs_verify_report *r, size_t i)
{
    return json_pack("{s:I, s:b, s:s*, s:s*, s:o*, s:o*, s:s*}", "index", (json_int_t)i, "valid", r->ok, "signer",
                     r->signer, "anchor", r->anchor, "signed_digest", rs_digest_json(&r->expected), "image_digest",
                     rs_digest_json(&r->actual), "reason", r->ok ? NULL : r->reason);
}

static int print_json(const char *path, const rs_verification *v)
{
    json_t *sigs = json_array();

    for (size_t i = 0; i < v->count; i++)
        json_array_append_new(sigs, report_json(&v->reports[i], i));
    if (cli_json_print(json_pack("{s:s, s:s, s:b, s:o}", "file", path, "format", v->format, "valid", v->ok,
                                 "signatures", sigs)) != EXIT_OK)
        return EXIT_FAIL;
    if (!v->ok)
        fprintf(stderr, "reprosign: %s: %s\n", path, v->count ? "no signature verifies" : "not signed");
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

static int uefi_json(const char *path, const uefi_verdict *u)
{
    json_t *sigs = json_array();

    for (size_t i = 0; i < u->sigs.count; i++)
        json_array_append_new(sigs, report_json(&u->sigs.reports[i], i));
    if (cli_json_print(json_pack("{s:s, s:s, s:s, s:b, s:s*, s:s*, s:o*, s:o}", "file", path, "format",
                                 u->sigs.format, "policy", "uefi db/dbx", "valid", u->ok, "anchor", u->anchor,
                                 "reason", u->ok ? NULL : u->reason, "image_hash", rs_digest_json(&u->image_hash),
                                 "signatures", sigs)) != EXIT_OK)
        return EXIT_FAIL;
    if (!u->ok)
        fprintf(stderr, "reprosign: %s: rejected: %s\n", path, u->reason);
    return u->ok ? EXIT_OK : EXIT_FAIL;
}

/* Firmware's verdict: unsigned images are judged by their hash alone. */
static int verify_uefi(const char *path, const rs_trust *trust, bool json)
{
    _cleanup_(uefi_verdict_free) uefi_verdict u = { 0 };
    rs_error err;

    if (uefi_verify_image(path, trust, &u, &err) < 0)
        return cli_fail(&err);
    if (json)
        return uefi_json(path, &u);
    for (size_t i = 0; i < u.sigs.count; i++) {
        const rs_verify_report *r = &u.sigs.reports[i];

        if (r->ok)
            printf("signature %zu: OK, signed by %s, chains to %s\n", i, r->signer ? r->signer : "?",
                   r->anchor ? r->anchor : "?");
        else
            printf("signature %zu: FAILED: %s\n", i, r->reason);
    }
    if (u.ok) {
        printf("%s: accepted by db (%s)\n", path, u.anchor ? u.anchor : "?");
        return EXIT_OK;
    }
    fprintf(stderr, "reprosign: %s: rejected: %s\n", path, u.reason);
    return EXIT_FAIL;
}

static int run(int argc, char **argv)
{
    _cleanup_trust_ rs_trust trust = { 0 };
    _cleanup_(rs_verification_free) rs_verification v = { 0 };
    bool json = false, have_cert = false, have_db = false, have_dbx = false;
    rs_error err;
    int c;

    if (rs_trust_init(&trust, &err) < 0)
        return cli_fail(&err);
    while ((c = cli_getopt(&cmd_verify, argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case 'c':
            if (rs_trust_add_file(&trust, optarg, &err) < 0)
                return cli_fail(&err);
            have_cert = true;
            break;
        case 'd':
        case 'x':
            if (uefi_trust_add_esl_file(&trust, optarg, c == 'x', &err) < 0)
                return cli_fail(&err);
            have_db |= c == 'd';
            have_dbx |= c == 'x';
            break;
        case 'v':
        case 'E':
            if ((c == 'v' ? uefi_trust_add_varstore(&trust, optarg, &err)
                          : uefi_trust_add_efivarfs(&trust, optarg, &err)) < 0)
                return cli_fail(&err);
            have_db = true;
            break;
        case 'j': json = true; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc)
        return cli_usage(&cmd_verify, "expected exactly one FILE");
    if (have_cert && (have_db || have_dbx))
        return cli_usage(&cmd_verify, "--cert cannot be combined with --db, --dbx, --vars or --efivars");
    if (have_dbx && !have_db)
        return cli_usage(&cmd_verify, "--dbx needs --db");
    if (!have_cert && !have_db)
        return cli_usage(&cmd_verify, "--cert, --db, --vars or --efivars is required");
    if (have_db)
        return verify_uefi(argv[optind], &trust, json);
    if (rs_op_verify(argv[optind], &trust, &v, &err) < 0)
        return cli_fail(&err);
    return json ? print_json(argv[optind], &v) : print_text(argv[optind], &v);
}

/* reprosign efi siglist */

#include "cli/cli.h"
#include "cli/efi_common.h"
#include "ops/ops.h"
#include "uefi/esl.h"

static int siglist_run(int argc, char **argv);

static const struct option siglist_longopts[] = {
    { "cert", required_argument, NULL, 'c' }, { "hash", required_argument, NULL, 'H' },
    { "owner", required_argument, NULL, 'g' }, { "output", required_argument, NULL, 'o' },
    { "sha1", no_argument, NULL, '1' },        { "help", no_argument, NULL, 'h' },
    { 0 },
};

static const rs_optdoc efi_siglist_docs[] = {
    { "cert", "CERT",
      "A certificate (PEM or DER) to list; may be repeated.",
      NULL },
    { "hash", "FILE",
      "An EFI image whose Authenticode digest to list; may be repeated.",
      NULL },
    { "sha1", NULL,
      "List the --hash digests as SHA-1 (EFI_CERT_SHA1).",
      "SHA-256" },
    { "owner", "GUID",
      "The SignatureOwner of every entry.",
      "00000000-0000-0000-0000-000000000000" },
    { "output", "ESL",
      "Where the signature list goes (required).",
      NULL },
    { 0 },
};

const rs_command cmd_efi_siglist = {
    .name = "efi siglist",
    .usage = "efi siglist (--cert CERT... | --hash FILE... [--sha1]) [--owner GUID] --output ESL\n\n"
             "Writes an EFI_SIGNATURE_LIST file: one X.509 list per certificate, then one\n"
             "SHA-256 list with the Authenticode digest of each EFI image given by --hash\n"
             "(an EFI_CERT_SHA1 list with --sha1: shim still looks SHA-1 digests up in db,\n"
             "dbx and its vendor dbx).\n"
             "The owner GUID defaults to all zeros, as efitools' default.",
    .run = siglist_run,
    .optdocs = efi_siglist_docs,
    .example = "reprosign efi siglist --cert db.crt --owner $(cat keys/GUID) --output db.esl",
    .options = siglist_longopts,
};

/* Firmware looks up the Authenticode digest, so only EFI images qualify. */
static int add_hash(const char *path, const EVP_MD *md, rs_digest **hashes, size_t *n, rs_error *err)
{
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    rs_digest *grown = reallocarray(*hashes, *n + 1, sizeof(**hashes));

    if (!grown)
        return rs_fail(err, "out of memory");
    *hashes = grown;
    if (rs_image_open(&img, path, err) < 0)
        return -1;
    if (img.format != &rs_format_pe)
        return rs_fail(err, "%s: not an EFI image (it is %s)", path, img.format->name);
    if (img.format->digest(&img, md, &grown[*n], err) < 0)
        return rs_error_prefix(err, "%s", path);
    (*n)++;
    return 0;
}

static int siglist_run(int argc, char **argv)
{
    _cleanup_free_ const char **certs = calloc((size_t)argc + 1, sizeof(char *));
    _cleanup_free_ const char **images = calloc((size_t)argc + 1, sizeof(char *));
    const EVP_MD *md = EVP_sha256();
    _cleanup_free_ rs_digest *hashes = NULL;
    _cleanup_bytes_ rs_bytes esl = { 0 };
    const char *output = NULL, *owner_s = NULL;
    size_t ncerts = 0, nimages = 0, nhashes = 0;
    efi_guid owner;
    rs_error err;
    int c;

    if (!certs || !images)
        return EXIT_FAIL;
    while ((c = cli_getopt(&cmd_efi_siglist, argc, argv, "h", siglist_longopts)) != -1) {
        switch (c) {
        case 'c': certs[ncerts++] = optarg; break;
        case 'H': images[nimages++] = optarg; break;
        case '1': md = EVP_sha1(); break;
        case 'g': owner_s = optarg; break;
        case 'o': output = optarg; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind != argc || !output || (!ncerts && !nimages))
        return cli_usage(&cmd_efi_siglist, "expected --cert or --hash, and --output");
    if (efi_parse_owner(owner_s, &owner, &err) < 0)
        return cli_usage(&cmd_efi_siglist, "%s", err.msg);
    for (size_t i = 0; i < nimages; i++)
        if (add_hash(images[i], md, &hashes, &nhashes, &err) < 0)
            return cli_fail(&err);
    for (size_t i = 0; i < ncerts; i++)
        if (efi_append_cert_lists(&esl, certs[i], &owner, &err) < 0)
            return cli_fail(&err);
    if (nhashes && esl_append_hashes(&esl, &owner, hashes, nhashes, &err) < 0)
        return cli_fail(&err);
    return efi_write_output(output, &esl, &err) < 0 ? cli_fail(&err) : EXIT_OK;
}

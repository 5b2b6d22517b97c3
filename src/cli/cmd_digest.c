#include <stdio.h>

#include "cli/cli.h"
#include "ops/ops.h"

static int run(int argc, char **argv);

static const struct option longopts[] = {
    { "hash", required_argument, NULL, 'H' },
    { "json", no_argument, NULL, 'j' },
    { "help", no_argument, NULL, 'h' },
    { 0 },
};

static const rs_optdoc digest_docs[] = {
    { "hash", "sha256|sha384|sha512",
      "The digest algorithm.",
      "sha256" },
    { "json", NULL,
      "Print the digest as one JSON document.",
      NULL },
    { 0 },
};

const rs_command cmd_digest = {
    .name = "digest",
    .summary = "print the digest a signature over the file binds to",
    .usage = "digest FILE [--hash sha256|sha384|sha512] [--json]\n\n"
             "For an EFI image this is the Authenticode digest of the image as signed\n"
             "(certificate table excluded, data zero-padded to 8 bytes as sbsign pads it).",
    .run = run,
    .optdocs = digest_docs,
    .example = "reprosign digest grubx64.efi",
    .options = longopts,
};

static int run(int argc, char **argv)
{
    const char *hash = "sha256";
    const EVP_MD *md;
    bool json = false;
    rs_digest d;
    rs_error err;
    char hex[2 * RS_MAX_DIGEST + 1];
    int c;

    while ((c = cli_getopt(&cmd_digest, argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case 'H': hash = optarg; break;
        case 'j': json = true; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc)
        return cli_usage(&cmd_digest, "expected exactly one FILE");
    if (rs_md_by_name(hash, &md, &err) < 0)
        return cli_usage(&cmd_digest, "%s", err.msg);
    if (rs_op_digest(argv[optind], md, &d, &err) < 0)
        return cli_fail(&err);
    rs_hex(d.bytes, d.len, hex);
    if (!json) {
        printf("%s\n", hex);
        return EXIT_OK;
    }
    return cli_json_print(json_pack("{s:s, s:s, s:o}", "file", argv[optind], "algorithm", hash, "digest",
                                    rs_digest_json(&d)));
}

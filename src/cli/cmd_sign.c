#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "ops/ops.h"

static int run(int argc, char **argv);

const rs_command cmd_sign = {
    .name = "sign",
    .summary = "sign an EFI image or a kernel module",
    .usage = "sign --key KEY --cert CERT [--hash sha256|sha384|sha512] [--detached]\n"
             "                      [--keyid] [--no-signing-time] [--addcert CERTS] [--output OUT] FILE\n\n"
             "Signs FILE. Without --output the signed file is FILE.signed (as sbsign).\n"
             "--detached writes only the signature (DER) to OUT (default FILE.sig).\n"
             "signingTime comes from SOURCE_DATE_EPOCH when set, so equal inputs give\n"
             "equal bytes; --no-signing-time leaves it out. --addcert embeds\n"
             "intermediate certificates. --keyid names the signer by its certificate's\n"
             "subjectKeyIdentifier instead of issuer and serial (as sign-file -k).",
    .run = run,
};

static int run(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "key", required_argument, NULL, 'k' },     { "cert", required_argument, NULL, 'c' },
        { "hash", required_argument, NULL, 'H' },    { "detached", no_argument, NULL, 'd' },
        { "output", required_argument, NULL, 'o' },  { "no-signing-time", no_argument, NULL, 'T' },
        { "addcert", required_argument, NULL, 'a' }, { "keyid", no_argument, NULL, 'K' },
        { "help", no_argument, NULL, 'h' },
        { 0 },
    };
    const char *key = NULL, *cert = NULL, *hash = "sha256", *output = NULL, *addcert = NULL;
    _cleanup_free_ char *default_output = NULL;
    _cleanup_(rs_signerp) rs_signer *signer = NULL;
    bool detached = false, signing_time = true, key_id = false;
    rs_sign_options opts;
    rs_error err;
    int c;

    while ((c = cli_getopt(&cmd_sign, argc, argv, "k:c:H:do:Ta:Kh", longopts)) != -1) {
        switch (c) {
        case 'k': key = optarg; break;
        case 'c': cert = optarg; break;
        case 'H': hash = optarg; break;
        case 'd': detached = true; break;
        case 'o': output = optarg; break;
        case 'T': signing_time = false; break;
        case 'a': addcert = optarg; break;
        case 'K': key_id = true; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc)
        return cli_usage(&cmd_sign, "expected exactly one FILE");
    if (!key || !cert)
        return cli_usage(&cmd_sign, "--key and --cert are required");
    if (!output && asprintf(&default_output, "%s%s", argv[optind], detached ? ".sig" : ".signed") < 0)
        return EXIT_FAIL;
    if (rs_sign_options_init(&opts, hash, signing_time, &err) < 0)
        return cli_usage(&cmd_sign, "%s", err.msg);
    opts.use_key_id = key_id;
    if (rs_signer_open(key, cert, &signer, &err) < 0 || (addcert && rs_signer_add_chain(signer, addcert, &err) < 0))
        return cli_fail(&err);
    if (rs_op_sign(argv[optind], signer, &opts, detached, output ? output : default_output, &err) < 0)
        return cli_fail(&err);
    return EXIT_OK;
}

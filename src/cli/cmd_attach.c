#include "cli/cli.h"
#include "crypto/ossl.h"
#include "ops/ops.h"

static int run(int argc, char **argv);

static const struct option longopts[] = {
    { "output", required_argument, NULL, 'o' },
    { "cert", required_argument, NULL, 'c' },
    { "help", no_argument, NULL, 'h' },
    { 0 },
};

static const rs_optdoc attach_docs[] = {
    { "output", "OUT",
      "Write the signed file to OUT instead of changing FILE.",
      "FILE, in place" },
    { "cert", "CERT",
      "The signer's certificate, to check a kernel module signature (which carries none).",
      NULL },
    { 0 },
};

const rs_command cmd_attach = {
    .name = "attach",
    .summary = "attach a detached signature (checks it fits the file)",
    .usage = "attach SIG FILE [--output OUT] [--cert CERT]\n\n"
             "Appends the DER signature SIG to FILE, in place unless --output is given.\n"
             "Refuses a signature whose signed digest differs from FILE's own digest:\n"
             "that is what a build that did not reproduce looks like. Kernel module\n"
             "signatures carry no certificate: --cert names the signer's, to check them.\n"
             "In place, a FILE that is a symlink has the file it leads to rewritten.",
    .run = run,
    .optdocs = attach_docs,
    .example = "reprosign attach grubx64.efi.sig grubx64.efi --output grubx64.efi.signed",
    .options = longopts,
};

static int run(int argc, char **argv)
{
    const char *output = NULL, *cert_path = NULL;
    _cleanup_(rs_x509p) X509 *cert = NULL;
    rs_error err;
    int c;

    while ((c = cli_getopt(&cmd_attach, argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'c': cert_path = optarg; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind + 2 != argc)
        return cli_usage(&cmd_attach, "expected SIG and FILE");
    if (cert_path && rs_cert_open(cert_path, &cert, &err) < 0)
        return cli_fail(&err);
    if (rs_op_attach(argv[optind], argv[optind + 1], cert, output, &err) < 0)
        return cli_fail(&err);
    return EXIT_OK;
}

#include <string.h>

#include "cli/cli.h"
#include "cli/signer_args.h"
#include "crypto/ossl.h"
#include "ops/offline.h"
#include "service/proto.h"

static int run(int argc, char **argv);

static const struct option longopts[] = {
    { "key", required_argument, NULL, 'k' }, { "pass", required_argument, NULL, 'W' },
    { "cert", required_argument, NULL, 'c' },
    { "via", required_argument, NULL, 'V' },
    { "output", required_argument, NULL, 'o' },
    { "help", no_argument, NULL, 'h' },
    { 0 },
};

static const rs_optdoc sign_blob_docs[] = {
    CLI_KEY_DOCS,
    { "cert", "CERT",
      "The certificate KEY belongs to.",
      "the request's certificate" },
    { "via", "SOCKET",
      "Have the signing service at SOCKET sign instead of a local key;\n"
      "only the request goes over the socket.",
      NULL },
    { "output", "SIGVALUE",
      "Where the raw signature value goes (required).",
      NULL },
    { 0 },
};

const rs_command cmd_sign_blob = {
    .name = "sign-blob",
    .summary = "offline signing: sign the digest in a request made by 'sign --prepare-offline'",
    .usage = "sign-blob REQ (--key KEY [--pass SPEC] [--cert CERT] | --via SOCKET) --output SIGVALUE\n\n"
             "Runs on the offline machine. Checks the request (it must describe a\n"
             "signature this tool would build), checks that KEY belongs to the request's\n"
             "certificate, signs the one digest in it and writes the raw signature value,\n"
             "for 'reprosign sign --finish'. --cert defaults to the request's certificate.\n"
             "With --via the signing service signs it instead, with the key it holds for\n"
             "the request's certificate; the value is checked against that certificate\n"
             "before it is written.",
    .run = run,
    .options = longopts,
    .optdocs = sign_blob_docs,
    .example = "reprosign sign-blob grubx64.req --key db.key --output grubx64.sigvalue",
};

static int sign_with_key(const rs_offline_request *req, const char *key, const char *cert, rs_bytes *value,
                         rs_error *err)
{
    _cleanup_(rs_signerp) rs_signer *signer = NULL;

    if ((cert ? rs_signer_open(key, cert, &signer, err) : rs_signer_open_with_cert(key, req->cert, &signer, err)) < 0)
        return -1;
    return rs_offline_sign(req, signer, value, err);
}

static int sign_via(const rs_offline_request *req, const char *socket, rs_bytes *value, rs_error *err)
{
    if (rs_sign_via(socket, req, value, err) < 0)
        return -1;
    return rs_offline_check_value(req, value, err);
}

static int run(int argc, char **argv)
{
    const char *key = NULL, *cert = NULL, *via = NULL, *output = NULL;
    _cleanup_(rs_offline_request_free) rs_offline_request req = { 0 };
    _cleanup_bytes_ rs_bytes value = { 0 };
    rs_error err;
    int c;

    while ((c = cli_getopt(&cmd_sign_blob, argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case 'k': key = optarg; break;
        case 'W':
            if (cli_set_pass(&cmd_sign_blob, optarg) != 0)
                return EXIT_USAGE;
            break;
        case 'c': cert = optarg; break;
        case 'V': via = optarg; break;
        case 'o': output = optarg; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc)
        return cli_usage(&cmd_sign_blob, "expected exactly one REQ");
    if (!output || !key == !via)
        return cli_usage(&cmd_sign_blob, "--output and one of --key and --via are required");
    if (via && cert)
        return cli_usage(&cmd_sign_blob, "--via takes no --cert: the request names its certificate");
    if (rs_offline_request_load(argv[optind], &req, &err) < 0)
        return cli_fail_file(&err, argv[optind]);
    if ((via ? sign_via(&req, via, &value, &err) : sign_with_key(&req, key, cert, &value, &err)) < 0)
        return cli_fail_file(&err, argv[optind]);
    if (rs_write_file(output, value.data, value.len, 0644, &err) < 0)
        return cli_fail_file(&err, output);
    return EXIT_OK;
}

/* reprosign efi sign-var */

#include "cli/cli.h"
#include "cli/signer_args.h"
#include "cli/efi_common.h"
#include "uefi/authvar.h"
#include "uefi/esl.h"
#include "uefi/uefi_trust.h"

static int signvar_run(int argc, char **argv);

static const struct option signvar_longopts[] = {
    { "name", required_argument, NULL, 'n' },      { "key", required_argument, NULL, 'k' }, { "pass", required_argument, NULL, 'W' },
    { "cert", required_argument, NULL, 'c' },      { "append", no_argument, NULL, 'a' },
    { "timestamp", required_argument, NULL, 't' }, { "output", required_argument, NULL, 'o' },
    { "help", no_argument, NULL, 'h' },            { 0 },
};

static const rs_optdoc efi_sign_var_docs[] = {
    { "name", "PK|KEK|db|dbx",
      "The variable the update is for (required).",
      NULL },
    CLI_KEY_DOCS,
    { "cert", "CERT",
      "The signer's certificate.",
      NULL },
    { "append", NULL,
      "Sign an APPEND_WRITE instead of a replacement.",
      NULL },
    { "timestamp", "T",
      "The update's time: Unix seconds or \"YYYY-MM-DD HH:MM:SS\" (UTC).",
      "SOURCE_DATE_EPOCH, else the current time" },
    { "output", "AUTH",
      "Where the authenticated update goes (required).",
      NULL },
    { 0 },
};

const rs_command cmd_efi_sign_var = {
    .name = "efi sign-var",
    .usage = "efi sign-var --name PK|KEK|db|dbx --key KEY [--pass SPEC] --cert CERT [--append] [--timestamp T]\n"
             "             ESL --output AUTH\n\n"
             "Writes a time-based authenticated update (EFI_VARIABLE_AUTHENTICATION_2 followed\n"
             "by the list) for SetVariable: PK signed by PK, KEK by PK, db and dbx by a KEK.\n"
             "--append signs an APPEND_WRITE. T is Unix seconds or \"YYYY-MM-DD HH:MM:SS\" (UTC);\n"
             "the default is SOURCE_DATE_EPOCH, else the current time.",
    .run = signvar_run,
    .optdocs = efi_sign_var_docs,
    .example = "reprosign efi sign-var --name db --key KEK.key --cert KEK.crt db.esl --output db.auth",
    .options = signvar_longopts,
};

static int signvar_build(const char *name, const char *key, const char *cert, bool append, const char *ts,
                         const char *esl_path, rs_bytes *out, rs_error *err)
{
    _cleanup_(rs_signerp) rs_signer *signer = NULL;
    _cleanup_bytes_ rs_bytes esl = { 0 };
    authvar_target t = { .name = name };

    t.attributes = EFI_SECURE_VAR_ATTRS | (append ? EFI_VARIABLE_APPEND_WRITE : 0);
    if (efi_secure_var(name, &t.guid, err) < 0 || efi_parse_timestamp(ts, t.timestamp, err) < 0 ||
        uefi_read_esl_file(esl_path, &esl, err) < 0)
        return -1;
    if (esl_walk(esl.data, esl.len, NULL, NULL, err) < 0)
        return rs_error_prefix(err, "%s", esl_path);
    if (rs_signer_open(key, cert, &signer, err) < 0)
        return -1;
    return authvar_sign(&t, esl.data, esl.len, signer, out, err);
}

static int signvar_run(int argc, char **argv)
{
    const char *name = NULL, *key = NULL, *cert = NULL, *ts = NULL, *output = NULL;
    _cleanup_bytes_ rs_bytes auth = { 0 };
    bool append = false;
    rs_error err;
    int c;

    while ((c = cli_getopt(&cmd_efi_sign_var, argc, argv, "h", signvar_longopts)) != -1) {
        switch (c) {
        case 'n': name = optarg; break;
        case 'k': key = optarg; break;
        case 'W':
            if (cli_set_pass(&cmd_efi_sign_var, optarg) != 0)
                return EXIT_USAGE;
            break;
        case 'c': cert = optarg; break;
        case 'a': append = true; break;
        case 't': ts = optarg; break;
        case 'o': output = optarg; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc || !name || !key || !cert || !output)
        return cli_usage(&cmd_efi_sign_var, "expected --name, --key, --cert, --output and one ESL");
    if (signvar_build(name, key, cert, append, ts, argv[optind], &auth, &err) < 0 ||
        efi_write_output(output, &auth, &err) < 0)
        return cli_fail(&err);
    return EXIT_OK;
}

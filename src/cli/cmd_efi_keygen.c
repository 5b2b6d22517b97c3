/* reprosign efi keygen: Secure Boot keys from scratch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/efi_common.h"
#include "crypto/pkcs11_uri.h"
#include "uefi/keygen.h"

static int keygen_run(int argc, char **argv);

static const struct option keygen_longopts[] = {
    { "bits", required_argument, NULL, 'b' },      { "name", required_argument, NULL, 'n' },
    { "timestamp", required_argument, NULL, 't' }, { "token", required_argument, NULL, 'T' },
    { "help", no_argument, NULL, 'h' },            { 0 },
};

static const rs_optdoc efi_keygen_docs[] = {
    { "bits", "2048|3072|4096",
      "The RSA key size.",
      "2048" },
    { "name", "NAME",
      "The certificates' common names are \"NAME PK\", \"NAME KEK\" and \"NAME db\".",
      "reprosign" },
    { "timestamp", "T",
      "The signed updates' time: Unix seconds or \"YYYY-MM-DD HH:MM:SS\" (UTC).",
      "SOURCE_DATE_EPOCH, else the current time" },
    { "token", "URI",
      "Generate the keys on the PKCS#11 token this pkcs11: URI names (token only,\n"
      "no object), labelled PK, KEK and db, and store the certificates there too.",
      NULL },
    { 0 },
};

const rs_command cmd_efi_keygen = {
    .name = "efi keygen",
    .summary = "make PK, KEK and db keys, certificates and signed updates from scratch",
    .usage = "efi keygen DIR [--bits 2048|3072|4096] [--name NAME] [--timestamp T] [--token URI]\n\n"
             "Creates DIR (which must not exist) with, for each of PK, KEK and db: the RSA key\n"
             "(NAME.key, 0600), its self-signed certificate (NAME.crt, PEM; NAME.cer, DER), a\n"
             "signature list (NAME.esl) owned by one random GUID (DIR/GUID), and the signed\n"
             "update that enrolls it on a machine in setup mode (NAME.auth: PK signed by\n"
             "itself, KEK by PK, db by KEK). RSA-2048 by default, as firmware expects;\n"
             "certificates are named \"NAME PK\" and so on (default NAME: \"reprosign\").\n"
             "With --token the key pairs are generated on the token and never leave it:\n"
             "each is labelled PK, KEK or db, its certificate (signed on the token) is\n"
             "stored beside it with the same CKA_ID, DIR gets no .key files, and the\n"
             "keys sign as --key 'URI;object=db'. A label the token already has is refused;\n"
             "if anything fails, what was made on the token is destroyed again.\n\n"
             "Replacing a machine's keys with only these makes it refuse everything else,\n"
             "Microsoft-signed option ROMs (graphics, network, storage cards) included: such\n"
             "a machine may not show a screen or boot again. Enroll Microsoft's KEK and\n"
             "UEFI CA beside your own unless you know the machine needs no option ROM.",
    .run = keygen_run,
    .optdocs = efi_keygen_docs,
    .example = "reprosign efi keygen ./keys && reprosign efi enroll --vars\n"
               "    /usr/share/OVMF/OVMF_VARS_4M.fd --pk keys/PK.crt --kek keys/KEK.crt\n"
               "    --db keys/db.crt --microsoft --owner $(cat keys/GUID) --output vars.fd",
    .options = keygen_longopts,
};

/* How to name the new keys; a pin-value never shows. */
static void print_token_keys(const char *token)
{
    _cleanup_free_ char *shown = rs_p11_uri_display(token);
    const char *uri = shown ? shown : token, *query = strchr(uri, '?');
    int path_len = (int)(query ? (size_t)(query - uri) : strlen(uri));

    printf("On the token: the keys pkcs11:...;object=PK|KEK|db;type=private and their certificates, e.g.\n"
           "  --key '%.*s;object=db;type=private%s'\n", path_len, uri, query ? query : "");
}

static int keygen_run(int argc, char **argv)
{
    uefi_keygen_options o = { .bits = 2048, .common_name = "reprosign" };
    const char *ts = NULL;
    char *end;
    rs_error err;
    int c;

    while ((c = cli_getopt(&cmd_efi_keygen, argc, argv, "h", keygen_longopts)) != -1) {
        switch (c) {
        case 'b':
            o.bits = (int)strtol(optarg, &end, 10);
            if (*end || end == optarg)
                return cli_usage(&cmd_efi_keygen, "--bits takes 2048, 3072 or 4096");
            break;
        case 'n': o.common_name = optarg; break;
        case 't': ts = optarg; break;
        case 'T': o.token = optarg; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc)
        return cli_usage(&cmd_efi_keygen, "expected one DIR");
    o.dir = argv[optind];
    if (efi_parse_timestamp(ts, o.timestamp, &err) < 0)
        return cli_usage(&cmd_efi_keygen, "%s", err.msg);
    if (uefi_keygen(&o, &err) < 0)
        return cli_fail(&err);
    if (o.token)
        print_token_keys(o.token);
    printf("%s: PK, KEK and db %s and signed updates (their owner GUID is in %s/GUID)\n"
           "Next, for a virtual machine: reprosign efi enroll --vars OVMF_VARS.fd --pk %s/PK.crt --kek %s/KEK.crt\n"
           "  --db %s/db.crt --owner $(cat %s/GUID) --output VARS.fd\n"
           "For a machine in setup mode: write db.auth, then KEK.auth, then PK.auth last (e.g. efi-updatevar -f).\n",
           o.dir, o.token ? "certificates (the keys are on the token)" : "keys, certificates", o.dir, o.dir, o.dir, o.dir, o.dir);
    return EXIT_OK;
}

/* reprosign efi: UEFI signature lists, authenticated variables and the
 * OVMF variable store. One small command per job, dispatched by name. */
#include <string.h>

#include "cli/cli.h"
#include "cli/efi_common.h"

static int run(int argc, char **argv);

static const rs_command *const subcommands[] = {
    &cmd_efi_siglist, &cmd_efi_sign_var, &cmd_efi_list, &cmd_efi_db, &cmd_efi_enroll, &cmd_efi_apply,
    &cmd_efi_shim_var, &cmd_efi_keygen, NULL,
};

const rs_command cmd_efi = {
    .name = "efi",
    .summary = "UEFI signature lists, signed variable updates, OVMF variable stores",
    .usage = "efi SUBCOMMAND ...\n\n"
             "  siglist  (--cert CERT... | --hash FILE...) [--owner GUID] --output ESL\n"
             "  sign-var --name PK|KEK|db|dbx --key KEY --cert CERT [--append] [--timestamp T] ESL --output AUTH\n"
             "  list     (ESL | AUTH | --vars VARSTORE [--name NAME]) [--json]\n"
             "  db       --vars VARSTORE [--name db|dbx|KEK|PK] --output ESL\n"
             "  enroll   --vars TEMPLATE --pk CERT --kek CERT... --db CERT... [--dbx ESL] [--owner GUID]\n"
             "           [--timestamp T] --output VARSTORE\n"
             "  apply    --vars VARSTORE --name PK|KEK|db|dbx AUTH --output VARSTORE\n"
             "  shim-var --vars VARSTORE --name MokList|MokListX|SbatLevel|... FILE --output VARSTORE\n"
             "  keygen   DIR [--bits 2048|3072|4096] [--name NAME]\n\n"
             "'reprosign efi SUBCOMMAND --help' describes one.",
    .run = run,
    .example = "reprosign efi list --vars /usr/share/OVMF/OVMF_VARS_4M.ms.fd",
    .subcommands = subcommands,
};


static int run(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage(&cmd_efi, "expected a subcommand");
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        cli_help(&cmd_efi);
        return EXIT_OK;
    }
    for (size_t i = 0; subcommands[i]; i++)
        if (!strcmp(argv[1], subcommands[i]->name + 4))
            return subcommands[i]->run(argc - 1, argv + 1);
    return cli_usage(&cmd_efi, "unknown subcommand '%s'", argv[1]);
}

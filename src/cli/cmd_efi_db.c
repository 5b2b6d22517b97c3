/* reprosign efi db */

#include "cli/cli.h"
#include "cli/efi_common.h"
#include "uefi/varupdate.h"

static int db_run(int argc, char **argv);

static const struct option db_longopts[] = {
    { "vars", required_argument, NULL, 'v' },   { "name", required_argument, NULL, 'n' },
    { "output", required_argument, NULL, 'o' }, { "help", no_argument, NULL, 'h' },
    { 0 },
};

static const rs_optdoc efi_db_docs[] = {
    { "vars", "VARSTORE",
      "The OVMF variable store to read (required).",
      NULL },
    { "name", "db|dbx|KEK|PK",
      "The variable whose list is written.",
      "db" },
    { "output", "ESL",
      "Where the signature list goes (required).",
      NULL },
    { 0 },
};

const rs_command cmd_efi_db = {
    .name = "efi db",
    .usage = "efi db --vars VARSTORE [--name db|dbx|KEK|PK] --output ESL\n\n"
             "Writes the signature list a variable store holds for db (or another variable).",
    .run = db_run,
    .optdocs = efi_db_docs,
    .example = "reprosign efi db --vars /usr/share/OVMF/OVMF_VARS_4M.ms.fd --name dbx --output dbx.esl",
    .options = db_longopts,
};

static int db_run(int argc, char **argv)
{
    _cleanup_varstore_ varstore vs = { 0 };
    const char *vars = NULL, *name = "db", *output = NULL;
    const efi_guid *guid;
    const vs_var *v;
    rs_bytes data;
    rs_error err;
    int c;

    while ((c = cli_getopt(&cmd_efi_db, argc, argv, "h", db_longopts)) != -1) {
        switch (c) {
        case 'v': vars = optarg; break;
        case 'n': name = optarg; break;
        case 'o': output = optarg; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind != argc || !vars || !output)
        return cli_usage(&cmd_efi_db, "expected --vars and --output");
    if (efi_secure_var(name, &guid, &err) < 0)
        return cli_usage(&cmd_efi_db, "%s", err.msg);
    if (varstore_load(vars, &vs, &err) < 0)
        return cli_fail(&err);
    v = varstore_find(&vs, name, guid);
    if (!v) {
        rs_fail(&err, "%s: the variable store has no %s", vars, name);
        return cli_fail(&err);
    }
    data = (rs_bytes){ .data = (uint8_t *)varstore_data(&vs, v), .len = v->data_len };
    return efi_write_output(output, &data, &err) < 0 ? cli_fail(&err) : EXIT_OK;
}

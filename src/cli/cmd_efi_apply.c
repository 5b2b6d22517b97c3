/* reprosign efi apply */

#include "cli/cli.h"
#include "cli/efi_common.h"
#include "ops/ops.h"
#include "uefi/varupdate.h"

static int apply_run(int argc, char **argv);

static const rs_optdoc efi_apply_docs[] = {
    { "vars", "VARSTORE",
      "The variable store to update (required).",
      NULL },
    { "name", "PK|KEK|db|dbx",
      "The variable AUTH updates (required).",
      NULL },
    { "output", "VARSTORE",
      "Where the updated variable store goes (required).",
      NULL },
    { 0 },
};

const rs_command cmd_efi_apply = {
    .name = "efi apply",
    .usage = "efi apply --vars VARSTORE --name PK|KEK|db|dbx AUTH --output VARSTORE\n\n"
             "Applies a signed update (from 'efi sign-var' or sign-efi-sig-list) to a variable\n"
             "store with the firmware's checks: the signer must be allowed to write the\n"
             "variable, a replacement must be newer than the stored one, and an append adds\n"
             "only entries the variable does not have yet.",
    .run = apply_run,
    .optdocs = efi_apply_docs,
    .example = "reprosign efi apply --vars vars.fd --name db db.auth --output vars-new.fd",
    .options = efi_store_write_longopts,
};

static int apply(const char *vars, const char *name, const char *auth_path, const char *output, rs_error *err)
{
    _cleanup_varstore_ varstore vs = { 0 };
    _cleanup_(uefi_update_free) uefi_update u = { 0 };
    _cleanup_bytes_ rs_bytes auth = { 0 };

    if (varstore_load(vars, &vs, err) < 0)
        return -1;
    if (rs_read_file(auth_path, MAX_AUTH_FILE, &auth, err) < 0 ||
        uefi_apply_auth(&vs, name, auth.data, auth.len, &u, err) < 0)
        return rs_error_prefix(err, "%s", auth_path);
    if (varstore_write(&vs, output, err) < 0)
        return -1;
    printf("%s: %s %s, signed by %s\n", output, u.append ? "appended to" : "replaced", name,
           u.signer ? u.signer : "?");
    return 0;
}

static int apply_run(int argc, char **argv)
{
    efi_store_write_args a;
    rs_error err;
    int rc = efi_parse_store_write(&cmd_efi_apply, argc, argv, "AUTH file", &a);

    if (rc >= 0)
        return rc;
    return apply(a.vars, a.name, a.file, a.output, &err) < 0 ? cli_fail(&err) : EXIT_OK;
}

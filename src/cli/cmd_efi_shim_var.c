/* reprosign efi shim-var: MokList, MokListX, SbatLevel and shim's other
 * state variables written straight into a variable store, as MokManager or
 * shim would leave them, so a test boot needs no MokManager. */

#include <string.h>

#include "base/file.h"
#include "cli/cli.h"
#include "cli/efi_common.h"
#include "uefi/chain_inputs.h"
#include "uefi/esl.h"
#include "uefi/sbat.h"
#include "uefi/varstore.h"

/* MokList of a machine with many DKMS keys is a few KiB; OVMF's whole
 * variable store is 256 KiB. */
#define MAX_SHIM_VAR_FILE (256u * 1024)

static int shim_var_run(int argc, char **argv);

static const rs_optdoc efi_shim_var_docs[] = {
    { "vars", "VARSTORE",
      "The variable store to update (required).",
      NULL },
    { "name", "MokList|MokListX|SbatLevel|SbatPolicy|MokSBState|MokDBState|MokPolicy",
      "The shim variable to write (required).",
      NULL },
    { "output", "VARSTORE",
      "Where the updated variable store goes (required).",
      NULL },
    { 0 },
};

const rs_command cmd_efi_shim_var = {
    .name = "efi shim-var",
    .usage = "efi shim-var --vars VARSTORE --name NAME FILE --output VARSTORE\n\n"
             "Writes one of shim's variables (GUID 605dab50-e046-4300-abb6-3dd810dd8b23) into\n"
             "a variable store, replacing any copy, with the attributes shim requires:\n"
             "non-volatile and boot-service only (shim ignores and deletes a copy that is\n"
             "runtime-accessible). NAME is MokList or MokListX (FILE is a signature list),\n"
             "SbatLevel (FILE is the CSV level), or SbatPolicy, MokSBState, MokDBState or\n"
             "MokPolicy (FILE holds their byte).",
    .run = shim_var_run,
    .optdocs = efi_shim_var_docs,
    .example = "reprosign efi shim-var --vars vars.fd --name MokList mok.esl --output vars-mok.fd",
    .options = efi_store_write_longopts,
};

/* Each variable's contents must be what shim can read. */
static int check_contents(const char *name, const rs_bytes *b, rs_error *err)
{
    _cleanup_free_ char *level = NULL;

    if (!strcmp(name, "MokList") || !strcmp(name, "MokListX"))
        return esl_walk(b->data, b->len, NULL, NULL, err);
    if (!strcmp(name, "SbatLevel")) {
        if (memchr(b->data, '\0', b->len) || !(level = strndup((const char *)b->data, b->len)))
            return rs_fail(err, "an SbatLevel is text without NUL bytes");
        return sbat_level_check(level, err);
    }
    if (!strcmp(name, "SbatPolicy") || !strcmp(name, "MokSBState") || !strcmp(name, "MokDBState") ||
        !strcmp(name, "MokPolicy"))
        return b->len == 1 ? 0 : rs_fail(err, "%s holds one byte, not %zu", name, b->len);
    return rs_fail(err, "unknown shim variable '%s' (MokList, MokListX, SbatLevel, SbatPolicy, MokSBState, "
                        "MokDBState, MokPolicy)", name);
}

static int write_var(const char *vars, const char *name, const char *path, const char *output, rs_error *err)
{
    static const uint8_t no_time[EFI_TIME_SIZE];
    _cleanup_varstore_ varstore vs = { 0 };
    _cleanup_bytes_ rs_bytes data = { 0 };

    if (rs_read_file(path, MAX_SHIM_VAR_FILE, &data, err) < 0)
        return rs_error_prefix(err, "%s", path);
    if (data.len == 0)
        return rs_fail(err, "%s: empty (a variable cannot be empty)", path);
    if (check_contents(name, &data, err) < 0)
        return rs_error_prefix(err, "%s", path);
    if (varstore_load(vars, &vs, err) < 0)
        return -1;
    if (varstore_set(&vs, name, &efi_guid_shim_lock, SHIM_VAR_ATTRS, no_time, data.data, data.len, err) < 0)
        return rs_error_prefix(err, "%s", vars);
    return varstore_write(&vs, output, err);
}

static int shim_var_run(int argc, char **argv)
{
    efi_store_write_args a;
    rs_error err;
    int rc = efi_parse_store_write(&cmd_efi_shim_var, argc, argv, "FILE", &a);

    if (rc >= 0)
        return rc;
    return write_var(a.vars, a.name, a.file, a.output, &err) < 0 ? cli_fail(&err) : EXIT_OK;
}

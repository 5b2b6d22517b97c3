/* chain's inputs, from files or from an OVMF variable store. */
#include "uefi/chain_inputs.h"

#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "uefi/esl.h"
#include "uefi/sbat.h"
#include "uefi/uefi_trust.h"
#include "uefi/varstore.h"

/* shim 16.1's SbatLevel is under 200 bytes and Microsoft's published
 * levels under 1 KiB; 64 KiB leaves room for decades of revocations. */
#define MAX_SBAT_LEVEL_FILE (64u * 1024)

static rs_bytes *esl_slot(chain_inputs *in, chain_var var)
{
    switch (var) {
    case CHAIN_DB: return &in->db;
    case CHAIN_DBX: return &in->dbx;
    case CHAIN_MOK: return &in->mok;
    default: return &in->mokx;
    }
}

static int add_esl(chain_inputs *in, chain_var var, const uint8_t *data, size_t len, rs_error *err)
{
    /* Each file must walk on its own, so an error names the right one. */
    if (esl_walk(data, len, NULL, NULL, err) < 0)
        return -1;
    in->have_db |= var == CHAIN_DB;
    return rs_bytes_append(esl_slot(in, var), data, len, err);
}

int chain_inputs_add_esl_file(chain_inputs *in, chain_var var, const char *path, rs_error *err)
{
    _cleanup_bytes_ rs_bytes esl = { 0 };

    if (uefi_read_esl_file(path, &esl, err) < 0)
        return -1;
    if (add_esl(in, var, esl.data, esl.len, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

static int set_level(chain_inputs *in, const uint8_t *data, size_t len, bool attrs_ok, rs_error *err)
{
    free(in->sbat_level);
    if (memchr(data, '\0', len))
        len = strnlen((const char *)data, len);
    if (!(in->sbat_level = strndup((const char *)data, len)))
        return rs_fail(err, "out of memory");
    in->sbat_level_attrs_ok = attrs_ok;
    return sbat_level_check(in->sbat_level, err);
}

int chain_inputs_set_sbat_level_file(chain_inputs *in, const char *path, rs_error *err)
{
    _cleanup_bytes_ rs_bytes b = { 0 };

    if (rs_read_file(path, MAX_SBAT_LEVEL_FILE, &b, err) < 0 || set_level(in, b.data, b.len, true, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

/* mok.c mok_state_variable_data: every shim variable must be NV|BS and
 * not RT, or shim ignores (and deletes) it. */
static bool shim_attrs(const vs_var *v)
{
    return (v->attributes & SHIM_VAR_ATTRS) == SHIM_VAR_ATTRS && !(v->attributes & EFI_VARIABLE_RUNTIME_ACCESS);
}

static const vs_var *shim_var(const varstore *vs, const char *name)
{
    const vs_var *v = varstore_find(vs, name, &efi_guid_shim_lock);

    return v && v->data_len && shim_attrs(v) ? v : NULL;
}

/* MokSBState and MokDBState (mirrored as MokIgnoreDB) take effect when
 * their first byte is 1 (mok.c import_mok_state, the .state field). */
static bool shim_flag(const varstore *vs, const char *name)
{
    const vs_var *v = shim_var(vs, name);

    return v && varstore_data(vs, v)[0] == 1;
}

static int add_shim_vars(chain_inputs *in, const varstore *vs, rs_error *err)
{
    const vs_var *mok = shim_var(vs, "MokList"), *mokx = shim_var(vs, "MokListX");
    const vs_var *level = varstore_find(vs, "SbatLevel", &efi_guid_shim_lock);
    const vs_var *policy = varstore_find(vs, "SbatPolicy", &efi_guid_shim_lock);
    const vs_var *mok_policy = shim_var(vs, "MokPolicy");

    if (mok && add_esl(in, CHAIN_MOK, varstore_data(vs, mok), mok->data_len, err) < 0)
        return rs_error_prefix(err, "MokList");
    if (mokx && add_esl(in, CHAIN_MOKX, varstore_data(vs, mokx), mokx->data_len, err) < 0)
        return rs_error_prefix(err, "MokListX");
    if (level && level->data_len && set_level(in, varstore_data(vs, level), level->data_len, shim_attrs(level), err) < 0)
        return rs_error_prefix(err, "SbatLevel");
    if (policy && policy->data_len)
        in->sbat_policy = varstore_data(vs, policy)[0];
    in->insecure |= shim_flag(vs, "MokSBState");
    in->ignore_db |= shim_flag(vs, "MokDBState");
    /* include/mok.h MOK_POLICY_REQUIRE_NX. */
    in->require_nx |= mok_policy && (varstore_data(vs, mok_policy)[0] & 1);
    return 0;
}

static int add_signature_db(void *ctx, varstore_db which, const uint8_t *esl, size_t len, rs_error *err)
{
    return add_esl(ctx, which == VARSTORE_DBX ? CHAIN_DBX : CHAIN_DB, esl, len, err);
}

int chain_inputs_add_varstore(chain_inputs *in, const char *path, rs_error *err)
{
    _cleanup_varstore_ varstore vs = { 0 };

    if (varstore_load(path, &vs, err) < 0 || varstore_each_signature_db(&vs, path, add_signature_db, in, err) < 0)
        return -1;
    if (add_shim_vars(in, &vs, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

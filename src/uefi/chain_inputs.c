/* chain's inputs, from files, an OVMF variable store or efivarfs. */
#include "uefi/chain_inputs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "uefi/efivarfs.h"
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

/* Where shim's state is found. In a firmware store it is in the NV|BS
 * variables; on a running machine only their runtime mirrors are visible
 * (mok.c mok_state_variables: rtname), which shim writes BS|RT at each
 * boot: MokListRT also holds shim's vendor certificate, SbatLevelRT is
 * the level it applied, and SbatPolicy is never mirrored. */
typedef struct shim_names {
    const char *mok, *mokx, *level, *policy, *sb_state, *db_state, *mok_policy;
} shim_names;

static const shim_names store_names = { "MokList", "MokListX", "SbatLevel", "SbatPolicy", "MokSBState",
                                        "MokDBState", "MokPolicy" };
static const shim_names runtime_names = { "MokListRT", "MokListXRT", "SbatLevelRT", NULL, "MokSBStateRT",
                                          "MokIgnoreDB", "MokPolicyRT" };

/* mok.c mok_state_variable_data: every shim variable must be NV|BS and
 * not RT, or shim ignores (and deletes) it. A runtime mirror is RT by
 * nature and was checked by shim when it made it. */
static bool shim_attrs(const varstore *vs, const vs_var *v)
{
    if (vs->runtime)
        return true;
    return (v->attributes & SHIM_VAR_ATTRS) == SHIM_VAR_ATTRS && !(v->attributes & EFI_VARIABLE_RUNTIME_ACCESS);
}

static const vs_var *shim_var(const varstore *vs, const char *name)
{
    const vs_var *v = name ? varstore_find(vs, name, &efi_guid_shim_lock) : NULL;

    return v && v->data_len && shim_attrs(vs, v) ? v : NULL;
}

/* MokSBState and MokDBState (mirrored as MokIgnoreDB) take effect when
 * their first byte is 1 (mok.c import_mok_state, the .state field). */
static bool shim_flag(const varstore *vs, const char *name)
{
    const vs_var *v = shim_var(vs, name);

    return v && varstore_data(vs, v)[0] == 1;
}

/* A MokListRT too large for one variable is mirrored in pieces: MokListRT,
 * MokListRT1, MokListRT2, ... (mok.c mirror_mok_db), joined back in order
 * before the lists are read. */
static int add_mok(chain_inputs *in, chain_var var, const varstore *vs, const char *name, rs_error *err)
{
    _cleanup_bytes_ rs_bytes joined = { 0 };
    char piece[300];
    const vs_var *v = shim_var(vs, name);

    if (!v)
        return 0;
    for (size_t i = 1; v; i++) {
        if (rs_bytes_append(&joined, varstore_data(vs, v), v->data_len, err) < 0)
            return -1;
        snprintf(piece, sizeof(piece), "%s%zu", name, i);
        v = vs->runtime && i <= vs->n ? shim_var(vs, piece) : NULL;
    }
    if (add_esl(in, var, joined.data, joined.len, err) < 0)
        return rs_error_prefix(err, "%s", name);
    return 0;
}

static int add_shim_vars(chain_inputs *in, const varstore *vs, rs_error *err)
{
    const shim_names *n = vs->runtime ? &runtime_names : &store_names;
    const vs_var *level = n->level ? varstore_find(vs, n->level, &efi_guid_shim_lock) : NULL;
    const vs_var *policy = n->policy ? varstore_find(vs, n->policy, &efi_guid_shim_lock) : NULL;
    const vs_var *mok_policy = shim_var(vs, n->mok_policy);

    if (add_mok(in, CHAIN_MOK, vs, n->mok, err) < 0 || add_mok(in, CHAIN_MOKX, vs, n->mokx, err) < 0)
        return -1;
    if (level && level->data_len &&
        set_level(in, varstore_data(vs, level), level->data_len, shim_attrs(vs, level), err) < 0)
        return rs_error_prefix(err, "%s", n->level);
    if (policy && policy->data_len)
        in->sbat_policy = varstore_data(vs, policy)[0];
    in->insecure |= shim_flag(vs, n->sb_state);
    in->ignore_db |= shim_flag(vs, n->db_state);
    /* include/mok.h MOK_POLICY_REQUIRE_NX. */
    in->require_nx |= mok_policy && (varstore_data(vs, mok_policy)[0] & 1);
    return 0;
}

static int add_signature_db(void *ctx, varstore_db which, const uint8_t *esl, size_t len, rs_error *err)
{
    return add_esl(ctx, which == VARSTORE_DBX ? CHAIN_DBX : CHAIN_DB, esl, len, err);
}

static int add_store(chain_inputs *in, const varstore *vs, const char *path, rs_error *err)
{
    if (varstore_each_signature_db(vs, path, add_signature_db, in, err) < 0)
        return -1;
    if (add_shim_vars(in, vs, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

int chain_inputs_add_varstore(chain_inputs *in, const char *path, rs_error *err)
{
    _cleanup_varstore_ varstore vs = { 0 };

    if (varstore_load(path, &vs, err) < 0)
        return -1;
    return add_store(in, &vs, path, err);
}

static bool global_flag(const varstore *vs, const char *name)
{
    const vs_var *v = varstore_find(vs, name, &efi_guid_global);

    return v && v->data_len == 1 && varstore_data(vs, v)[0] == 1;
}

int chain_inputs_add_efivarfs(chain_inputs *in, const char *dir, rs_error *err)
{
    _cleanup_varstore_ varstore vs = { 0 };

    if (efivarfs_load(dir, &vs, err) < 0)
        return -1;
    in->from_machine = true;
    in->secure_boot = global_flag(&vs, "SecureBoot");
    in->setup_mode = global_flag(&vs, "SetupMode");
    return add_store(in, &vs, dir, err);
}

#include "uefi/varupdate.h"

#include <stdlib.h>
#include <string.h>

#include "crypto/ossl.h"
#include "uefi/authvar.h"
#include "uefi/esl.h"
#include "uefi/uefi_trust.h"

void uefi_update_free(uefi_update *u)
{
    free(u->signer);
    u->signer = NULL;
}

typedef struct finder {
    const esl_entry *want;
    bool found;
} finder;

static int find_entry(void *ctx, const esl_entry *e, rs_error *err)
{
    finder *f = ctx;

    if (efi_guid_equal(&e->type, &f->want->type) && efi_guid_equal(&e->owner, &f->want->owner) &&
        e->len == f->want->len && !memcmp(e->data, f->want->data, e->len))
        f->found = true;
    return 0;
}

typedef struct merger {
    const uint8_t *base;
    size_t base_len;
    rs_bytes kept;           /* entries of the current list not in base */
} merger;

static int keep_new(void *ctx, const esl_entry *e, rs_error *err)
{
    merger *m = ctx;
    finder f = { e, false };

    if (esl_walk(m->base, m->base_len, find_entry, &f, err) < 0)
        return -1;
    if (f.found)
        return 0;
    if (rs_bytes_append(&m->kept, e->owner.b, 16, err) < 0)
        return -1;
    return rs_bytes_append(&m->kept, e->data, e->len, err);
}

/* One list of add, without the entries base has; dropped when none remain. */
static int merge_list(merger *m, const uint8_t *list, uint32_t list_size, rs_bytes *out, rs_error *err)
{
    uint32_t header_size = efi_le32(list + 20);
    uint8_t h[ESL_HEADER];

    m->kept.len = 0;
    if (esl_walk(list, list_size, keep_new, m, err) < 0)
        return -1;
    if (m->kept.len == 0)
        return 0;
    memcpy(h, list, ESL_HEADER);
    efi_put32(h + 16, (uint32_t)(ESL_HEADER + header_size + m->kept.len));
    if (rs_bytes_append(out, h, ESL_HEADER, err) < 0 ||
        rs_bytes_append(out, list + ESL_HEADER, header_size, err) < 0)
        return -1;
    return rs_bytes_append(out, m->kept.data, m->kept.len, err);
}

static int no_op(void *ctx, const esl_entry *e, rs_error *err)
{
    return 0;
}

int esl_merge(const uint8_t *base, size_t base_len, const uint8_t *add, size_t add_len, rs_bytes *out,
              rs_error *err)
{
    merger m = { base, base_len, { 0 } };
    int rc = 0;

    if (esl_walk(base, base_len, no_op, NULL, err) < 0 || esl_walk(add, add_len, no_op, NULL, err) < 0 ||
        rs_bytes_set(out, base, base_len, err) < 0)
        return -1;
    /* Both are valid now, so the list sizes can be followed directly. */
    for (size_t pos = 0; pos < add_len && rc == 0; pos += efi_le32(add + pos + 16))
        rc = merge_list(&m, add + pos, efi_le32(add + pos + 16), out, err);
    rs_bytes_free(&m.kept);
    return rc;
}

static int add_var_keys(rs_trust *keys, const varstore *vs, const char *name, const efi_guid *guid, rs_error *err)
{
    const vs_var *v = varstore_find(vs, name, guid);

    return v ? uefi_trust_add_esl(keys, varstore_data(vs, v), v->data_len, false, err) : 0;
}

/* Who may sign a write to name. Setup Mode (no PK) checks only that PK is
 * self-signed by the certificate it installs; KEK, db and dbx may be
 * written by anyone. */
static int signing_keys(const varstore *vs, const char *name, const authvar *a, rs_trust *keys, rs_error *err)
{
    _cleanup_(rs_x509p) X509 *signer = NULL;
    bool user_mode = varstore_find(vs, "PK", &efi_guid_global) != NULL;

    if (rs_trust_init(keys, err) < 0)
        return -1;
    if (!user_mode && !strcmp(name, "PK"))
        return uefi_trust_add_esl(keys, a->data, a->data_len, false, err);
    if (!user_mode)
        return authvar_signer(a, &signer, err) < 0 ? -1 : rs_trust_add_anchor(keys, signer, err);
    if (add_var_keys(keys, vs, "PK", &efi_guid_global, err) < 0)
        return -1;
    if (!strcmp(name, "db") || !strcmp(name, "dbx"))
        return add_var_keys(keys, vs, "KEK", &efi_guid_global, err);
    return 0;
}

/* The signed attributes say whether this is an append; try both. */
static int verify(const authvar *a, const char *name, const efi_guid *guid, const rs_trust *keys, uefi_update *u,
                  rs_error *err)
{
    rs_error append_err;

    if (authvar_verify(a, name, guid, EFI_SECURE_VAR_ATTRS, keys, &u->signer, err) == 0)
        return 0;
    if (authvar_verify(a, name, guid, EFI_SECURE_VAR_ATTRS | EFI_VARIABLE_APPEND_WRITE, keys, &u->signer,
                       &append_err) < 0)
        return -1;
    u->append = true;
    return 0;
}

static int store(varstore *vs, const char *name, const efi_guid *guid, const authvar *a, bool append,
                 rs_error *err)
{
    const vs_var *old = varstore_find(vs, name, guid);
    _cleanup_bytes_ rs_bytes merged = { 0 };
    uint8_t ts[EFI_TIME_SIZE];

    memcpy(ts, a->timestamp, EFI_TIME_SIZE);
    if (!old || !append) {
        if (old && efi_time_compare(a->timestamp, old->timestamp) <= 0)
            return rs_fail(err, "%s: the update's timestamp is not later than the stored one", name);
        return varstore_set(vs, name, guid, EFI_SECURE_VAR_ATTRS, ts, a->data, a->data_len, err);
    }
    if (esl_merge(varstore_data(vs, old), old->data_len, a->data, a->data_len, &merged, err) < 0)
        return -1;
    if (efi_time_compare(ts, old->timestamp) < 0)
        memcpy(ts, old->timestamp, EFI_TIME_SIZE);
    return varstore_set(vs, name, guid, EFI_SECURE_VAR_ATTRS, ts, merged.data, merged.len, err);
}

static int no_entries_check(const authvar *a, rs_error *err)
{
    if (a->data_len == 0)
        return rs_fail(err, "the payload deletes the variable; deleting is not supported");
    return esl_walk(a->data, a->data_len, no_op, NULL, err);
}

int uefi_apply_auth(varstore *vs, const char *name, const uint8_t *auth, size_t len, uefi_update *u,
                    rs_error *err)
{
    _cleanup_trust_ rs_trust keys = { 0 };
    const efi_guid *guid;
    authvar a;

    memset(u, 0, sizeof(*u));
    if (efi_secure_var(name, &guid, err) < 0 || authvar_parse(auth, len, &a, err) < 0 ||
        no_entries_check(&a, err) < 0 || signing_keys(vs, name, &a, &keys, err) < 0 ||
        verify(&a, name, guid, &keys, u, err) < 0)
        return -1;
    return store(vs, name, guid, &a, u->append, err);
}

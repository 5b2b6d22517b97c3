#include "uefi/varstore.h"

#include <stdlib.h>
#include <string.h>

#include "base/file.h"

#define FV_HEADER_MIN 64         /* fixed fields + one block map entry + terminator */
#define STORE_HEADER 28
#define VAR_HEADER 60
#define START_ID 0x55aa
#define STORE_FORMATTED 0x5a
#define STORE_HEALTHY 0xfe
#define MAX_STORE_FILE (64u * 1024 * 1024)

static uint64_t align4(uint64_t v)
{
    return (v + 3) & ~(uint64_t)3;
}

void varstore_free(varstore *vs)
{
    rs_bytes_free(&vs->image);
    free(vs->vars);
    if (vs->file) {
        rs_input_close(vs->file);
        free(vs->file);
    }
    memset(vs, 0, sizeof(*vs));
}

/* Firmware checks this too: the header's 16-bit words sum to zero. */
static bool fv_checksum_ok(const uint8_t *h, uint16_t len)
{
    uint16_t sum = 0;

    for (uint16_t i = 0; i + 1 < len; i += 2)
        sum = (uint16_t)(sum + efi_le16(h + i));
    return sum == 0;
}

/* Every byte `fill`: a flash image never written, as ArmVirtQemu's blank
 * AAVMF_VARS.fd ships (the firmware formats it at its first boot). */
static bool blank_as(const rs_bytes *image, uint8_t fill)
{
    for (size_t i = 0; i < image->len; i++)
        if (image->data[i] != fill)
            return false;
    return true;
}

static int parse_fv(varstore *vs, rs_error *err)
{
    const uint8_t *b = vs->image.data;
    uint64_t fv_len;
    uint16_t hlen;
    efi_guid fs;

    if (vs->image.len < FV_HEADER_MIN)
        return rs_fail(err, "too small for a firmware volume header (%zu bytes)", vs->image.len);
    memcpy(fs.b, b + 16, 16);
    if (memcmp(b + 40, "_FVH", 4) != 0 && (blank_as(&vs->image, 0x00) || blank_as(&vs->image, 0xff)))
        return rs_fail(err, "a blank variable store (every byte 0x%02x), which the firmware formats at its first "
                            "boot: start from a formatted one (such as AAVMF_VARS.ms.fd), or from a copy the "
                            "firmware has booted with", b[0]);
    if (memcmp(b + 40, "_FVH", 4) != 0)
        return rs_fail(err, "no firmware volume signature (_FVH) at offset 40");
    if (!efi_guid_equal(&fs, &efi_guid_nv_data_fv))
        return rs_fail(err, "firmware volume is not an NV variable store (file system GUID is not "
                            "gEfiSystemNvDataFvGuid)");
    fv_len = efi_le64(b + 32);
    hlen = efi_le16(b + 48);
    if (fv_len > vs->image.len)
        return rs_fail(err, "firmware volume length %llu is larger than the file (%zu bytes)",
                       (unsigned long long)fv_len, vs->image.len);
    if (hlen < FV_HEADER_MIN || hlen % 2 || (uint64_t)hlen + STORE_HEADER > fv_len)
        return rs_fail(err, "firmware volume header length %u is invalid", hlen);
    if (!fv_checksum_ok(b, hlen))
        return rs_fail(err, "firmware volume header checksum is wrong");
    vs->store_off = hlen;
    vs->store_end = fv_len;
    return 0;
}

static int parse_store_header(varstore *vs, rs_error *err)
{
    const uint8_t *h = vs->image.data + vs->store_off;
    uint32_t size = efi_le32(h + 16);
    efi_guid sig;

    memcpy(sig.b, h, 16);
    if (!efi_guid_equal(&sig, &efi_guid_auth_var_store))
        return rs_fail(err, "variable store is not an authenticated one (header GUID is not "
                            "gEfiAuthenticatedVariableGuid)");
    if (size < STORE_HEADER || size > vs->store_end - vs->store_off)
        return rs_fail(err, "variable store size %u does not fit in the firmware volume (%llu bytes)", size,
                       (unsigned long long)(vs->store_end - vs->store_off));
    if (h[20] != STORE_FORMATTED || h[21] != STORE_HEALTHY)
        return rs_fail(err, "variable store is not formatted and healthy (format 0x%02x, state 0x%02x)", h[20],
                       h[21]);
    vs->store_end = vs->store_off + size;
    return 0;
}

static void utf16_name(const uint8_t *p, uint32_t size, char *out, size_t cap)
{
    size_t o = 0;

    for (uint32_t i = 0; i + 1 < size; i += 2) {
        unsigned c = efi_le16(p + i);

        if (c == 0)
            break;
        if (c < 0x80 && o + 1 < cap)
            out[o++] = (char)c;
        else if (c < 0x800 && o + 2 < cap) {
            out[o++] = (char)(0xc0 | c >> 6);
            out[o++] = (char)(0x80 | (c & 0x3f));
        } else if (o + 3 < cap) {
            out[o++] = (char)(0xe0 | c >> 12);
            out[o++] = (char)(0x80 | ((c >> 6) & 0x3f));
            out[o++] = (char)(0x80 | (c & 0x3f));
        }
    }
    out[o] = '\0';
}

static int parse_var(varstore *vs, uint64_t pos, vs_var *v, rs_error *err)
{
    const uint8_t *h = vs->image.data + pos;
    uint32_t name_size = efi_le32(h + 36), data_size = efi_le32(h + 40);

    memset(v, 0, sizeof(*v));
    if ((uint64_t)name_size + data_size > vs->store_end - pos - VAR_HEADER)
        return rs_fail(err, "variable at offset 0x%llx: name (%u bytes) and data (%u bytes) run past the store",
                       (unsigned long long)pos, name_size, data_size);
    if (name_size < 2 || name_size % 2)
        return rs_fail(err, "variable at offset 0x%llx: invalid name size %u", (unsigned long long)pos, name_size);
    v->off = pos;
    v->state = h[2];
    v->attributes = efi_le32(h + 4);
    v->monotonic_count = efi_le64(h + 8);
    memcpy(v->timestamp, h + 16, EFI_TIME_SIZE);
    v->pubkey_index = efi_le32(h + 32);
    memcpy(v->guid.b, h + 44, 16);
    utf16_name(h + VAR_HEADER, name_size, v->name, sizeof(v->name));
    v->data_off = pos + VAR_HEADER + name_size;
    v->data_len = data_size;
    return 0;
}

static bool same_var(const vs_var *a, const vs_var *b)
{
    return efi_guid_equal(&a->guid, &b->guid) && !strcmp(a->name, b->name);
}

/* Live: VAR_ADDED, or caught mid-update (in deleted transition) with no
 * newer added copy, which is how edk2 recovers from an interrupted write. */
static void mark_active(varstore *vs)
{
    for (size_t i = 0; i < vs->n; i++) {
        vs_var *v = &vs->vars[i];

        v->active = v->state == VAR_ADDED;
        if (v->state != (VAR_ADDED & VAR_IN_DELETED_TRANSITION))
            continue;
        v->active = true;
        for (size_t j = 0; j < vs->n; j++)
            if (j != i && vs->vars[j].state == VAR_ADDED && same_var(v, &vs->vars[j]))
                v->active = false;
    }
}

static int parse_vars(varstore *vs, rs_error *err)
{
    uint64_t pos = align4(vs->store_off + STORE_HEADER);
    size_t cap = 0;

    vs->n = 0;
    while (pos + VAR_HEADER <= vs->store_end && efi_le16(vs->image.data + pos) == START_ID) {
        if (vs->n == cap) {
            vs_var *grown = reallocarray(vs->vars, cap ? cap * 2 : 32, sizeof(*grown));

            if (!grown)
                return rs_fail(err, "out of memory");
            vs->vars = grown;
            cap = cap ? cap * 2 : 32;
        }
        if (parse_var(vs, pos, &vs->vars[vs->n], err) < 0)
            return -1;
        pos = align4(vs->vars[vs->n].data_off + vs->vars[vs->n].data_len);
        vs->n++;
    }
    vs->free_off = pos < vs->store_end ? pos : vs->store_end;
    mark_active(vs);
    return 0;
}

static int parse_image(varstore *vs, rs_error *err)
{
    if (parse_fv(vs, err) < 0 || parse_store_header(vs, err) < 0)
        return -1;
    return parse_vars(vs, err);
}

int varstore_parse(const uint8_t *buf, size_t len, varstore *vs, rs_error *err)
{
    memset(vs, 0, sizeof(*vs));
    if (rs_bytes_set(&vs->image, buf, len, err) < 0)
        return -1;
    return parse_image(vs, err);
}

/* How much of the file to read: the volume its header claims, when that
 * is in the file; else all of it, for parse_fv to say what is wrong. */
static int volume_length(const rs_input *in, uint64_t *len, rs_error *err)
{
    uint8_t h[FV_HEADER_MIN];

    *len = in->size;
    if (in->size > MAX_STORE_FILE)
        return rs_fail(err, "%llu bytes, more than a variable store's flash image holds (at most %u: AAVMF's)",
                       (unsigned long long)in->size, MAX_STORE_FILE);
    if (in->size < sizeof(h))
        return 0;
    if (rs_input_read(in, 0, h, sizeof(h), err) < 0)
        return -1;
    if (!memcmp(h + 40, "_FVH", 4) && efi_le64(h + 32) >= sizeof(h) && efi_le64(h + 32) <= in->size)
        *len = efi_le64(h + 32);
    return 0;
}

int varstore_load(const char *path, varstore *vs, rs_error *err)
{
    uint64_t len;

    memset(vs, 0, sizeof(*vs));
    if (!(vs->file = calloc(1, sizeof(*vs->file))))
        return rs_fail(err, "out of memory");
    vs->file->fd = -1;
    if (rs_input_open(vs->file, path, err) < 0 || volume_length(vs->file, &len, err) < 0 ||
        rs_bytes_reserve(&vs->image, (size_t)len, err) < 0 ||
        rs_input_read(vs->file, 0, vs->image.data, (size_t)len, err) < 0)
        return rs_error_prefix(err, "%s", path);
    vs->image.len = (size_t)len;
    return parse_image(vs, err) < 0 ? rs_error_prefix(err, "%s", path) : 0;
}

int varstore_write(const varstore *vs, const char *path, rs_error *err)
{
    _cleanup_output_ rs_output out = { .fd = -1 };
    uint64_t rest = vs->file && vs->file->size > vs->image.len ? vs->file->size - vs->image.len : 0;

    if (rs_output_open(&out, path, 0644, err) < 0 || rs_output_write(&out, vs->image.data, vs->image.len, err) < 0 ||
        (rest && rs_output_copy(&out, vs->file, vs->image.len, rest, err) < 0) || rs_output_commit(&out, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

const vs_var *varstore_find(const varstore *vs, const char *name, const efi_guid *guid)
{
    for (size_t i = 0; i < vs->n; i++)
        if (vs->vars[i].active && efi_guid_equal(&vs->vars[i].guid, guid) && !strcmp(vs->vars[i].name, name))
            return &vs->vars[i];
    return NULL;
}

static bool erased(const uint8_t *p, uint64_t len)
{
    for (uint64_t i = 0; i < len; i++)
        if (p[i] != 0xff)
            return false;
    return true;
}

static void write_header(uint8_t *h, uint32_t attributes, const uint8_t ts[EFI_TIME_SIZE], uint32_t name_size,
                         uint32_t data_size, const efi_guid *guid)
{
    memset(h, 0, VAR_HEADER);
    efi_put16(h, START_ID);
    h[2] = VAR_ADDED;
    efi_put32(h + 4, attributes);
    memcpy(h + 16, ts, EFI_TIME_SIZE);
    efi_put32(h + 36, name_size);
    efi_put32(h + 40, data_size);
    memcpy(h + 44, guid->b, 16);
}

/* A damaged store can hold two live copies of a variable, and firmware
 * reads the first: every one is marked deleted, or the new copy would stay
 * hidden behind an old one. */
static void delete_live_copies(varstore *vs, const char *name, const efi_guid *guid)
{
    for (size_t i = 0; i < vs->n; i++)
        if (vs->vars[i].active && efi_guid_equal(&vs->vars[i].guid, guid) && !strcmp(vs->vars[i].name, name))
            vs->image.data[vs->vars[i].off + 2] &= VAR_IN_DELETED_TRANSITION & VAR_DELETED;
}

int varstore_set(varstore *vs, const char *name, const efi_guid *guid, uint32_t attributes,
                 const uint8_t timestamp[EFI_TIME_SIZE], const uint8_t *data, size_t len, rs_error *err)
{
    uint64_t name_size = 2 * (strlen(name) + 1), pos = vs->free_off, end;
    uint8_t *p;

    if (vs->runtime)
        return rs_fail(err, "a running machine's variables (efivarfs) are read-only here");
    if (len > UINT32_MAX || name_size > 512)
        return rs_fail(err, "variable %s is too large", name);
    end = pos + VAR_HEADER + name_size + len;
    if (end > vs->store_end)
        return rs_fail(err, "variable store is full: %s needs %llu bytes, %llu are free", name,
                       (unsigned long long)(end - pos), (unsigned long long)(vs->store_end - pos));
    p = vs->image.data + pos;
    /* All of it, as firmware checks at boot: leftovers after the new copy
     * would join the chain of variables and read as variables. */
    if (!erased(p, vs->store_end - pos))
        return rs_fail(err, "variable store's free space at offset 0x%llx is not erased", (unsigned long long)pos);
    write_header(p, attributes, timestamp, (uint32_t)name_size, (uint32_t)len, guid);
    for (size_t i = 0; i < name_size; i += 2) {
        p[VAR_HEADER + i] = (uint8_t)(i / 2 < strlen(name) ? name[i / 2] : 0);
        p[VAR_HEADER + i + 1] = 0;
    }
    memcpy(p + VAR_HEADER + name_size, data, len);
    delete_live_copies(vs, name, guid);
    return parse_vars(vs, err);
}

int varstore_each_signature_db(const varstore *vs, const char *path, varstore_esl_fn add, void *ctx, rs_error *err)
{
    const vs_var *db = varstore_find(vs, "db", &efi_guid_image_security);
    const vs_var *dbx = varstore_find(vs, "dbx", &efi_guid_image_security);

    if (!db && !varstore_find(vs, "PK", &efi_guid_global))
        return rs_fail(err, "%s: no keys are enrolled, so the firmware is in setup mode and checks no signature "
                            "(enroll them: 'reprosign efi enroll' into a store file; on a machine, efi keygen's "
                            "db.auth, KEK.auth, then PK.auth)", path);
    if (!db)
        return rs_fail(err, "%s: the variable store has no db", path);
    if (add(ctx, VARSTORE_DB, varstore_data(vs, db), db->data_len, err) < 0)
        return rs_error_prefix(err, "%s: db", path);
    if (dbx && add(ctx, VARSTORE_DBX, varstore_data(vs, dbx), dbx->data_len, err) < 0)
        return rs_error_prefix(err, "%s: dbx", path);
    return 0;
}

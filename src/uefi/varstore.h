/* The edk2/OVMF non-volatile variable store (OVMF_VARS*.fd): a firmware
 * volume (EFI_FIRMWARE_VOLUME_HEADER, gEfiSystemNvDataFvGuid) holding a
 * VARIABLE_STORE_HEADER (gEfiAuthenticatedVariableGuid), then
 * AUTHENTICATED_VARIABLE_HEADERs, each followed by its UTF-16 name and its
 * data, 4-byte aligned, until erased flash (0xFF). Updates are appended and
 * the old copy marked deleted, as the firmware itself does. */
#ifndef RS_UEFI_VARSTORE_H
#define RS_UEFI_VARSTORE_H

#include <stdbool.h>

#include "base/bytes.h"
#include "uefi/efi.h"

#define VAR_HEADER_VALID_ONLY 0x7f
#define VAR_ADDED 0x3f
#define VAR_IN_DELETED_TRANSITION 0xfe
#define VAR_DELETED 0xfd

typedef struct vs_var {
    uint64_t off;            /* of the header, in the file */
    uint8_t state;
    bool active;             /* the live copy of this variable */
    uint32_t attributes;
    uint64_t monotonic_count;
    uint8_t timestamp[EFI_TIME_SIZE];
    uint32_t pubkey_index;
    char name[256];          /* UTF-8 */
    efi_guid guid;
    uint64_t data_off;
    uint32_t data_len;
} vs_var;

typedef struct varstore {
    rs_bytes image;          /* the firmware volume: its header, the store */
    uint64_t store_off;      /* VARIABLE_STORE_HEADER */
    uint64_t store_end;
    uint64_t free_off;       /* first byte after the last variable */
    vs_var *vars;
    size_t n;
    /* Read from a running system (efivarfs.h): shim's variables are there
     * only as their runtime mirrors, and nothing may be written back. */
    bool runtime;
    /* varstore_load: the file, whose bytes after the volume (AAVMF's
     * 64 MiB flash image holds a 768 KiB one) are copied, not held. */
    struct rs_input *file;
} varstore;

/* Takes a copy of buf and validates every header and variable. */
int varstore_parse(const uint8_t *buf, size_t len, varstore *vs, rs_error *err);
/* Reads the firmware volume at the start of the file at path, and no
 * more, and validates it as varstore_parse does. */
int varstore_load(const char *path, varstore *vs, rs_error *err);
/* Writes the volume, then the rest of the file it was loaded from, to
 * path (a temporary file renamed into place). */
int varstore_write(const varstore *vs, const char *path, rs_error *err);
void varstore_free(varstore *vs);
#define _cleanup_varstore_ __attribute__((cleanup(varstore_free)))

/* The active copy of a variable, or NULL. */
const vs_var *varstore_find(const varstore *vs, const char *name, const efi_guid *guid);
static inline const uint8_t *varstore_data(const varstore *vs, const vs_var *v)
{
    return vs->image.data + v->data_off;
}

/* The image-security databases a chain is checked against. */
typedef enum { VARSTORE_DB, VARSTORE_DBX } varstore_db;
typedef int (*varstore_esl_fn)(void *ctx, varstore_db which, const uint8_t *esl, size_t len, rs_error *err);
/* Hands add the signature lists of db, which must be there, then of dbx
 * when there; errors name path and the variable. */
int varstore_each_signature_db(const varstore *vs, const char *path, varstore_esl_fn add, void *ctx, rs_error *err);

/* Writes a new copy of a variable after the last one and marks the old
 * copy (every live one, in a damaged store) deleted. */
int varstore_set(varstore *vs, const char *name, const efi_guid *guid, uint32_t attributes,
                 const uint8_t timestamp[EFI_TIME_SIZE], const uint8_t *data, size_t len, rs_error *err);

#endif

/* The running machine's UEFI variables as Linux shows them in efivarfs:
 * one file per variable, named NAME-GUID, holding the 4-byte little-endian
 * attributes word and then the data. A directory of such files (the
 * mount itself, or a copy of it) is loaded into a varstore marked
 * `runtime`, so everything that reads a store reads it too. */
#ifndef RS_UEFI_EFIVARFS_H
#define RS_UEFI_EFIVARFS_H

#include <stdbool.h>

#include "uefi/varstore.h"

#define EFIVARFS_DIR "/sys/firmware/efi/efivars"
#define EFIVARFS_ATTR_SIZE 4

/* Splits a file name NAME-GUID into v->name and v->guid and takes the
 * attributes from the file's first four bytes; v->data_off is left at
 * EFIVARFS_ATTR_SIZE, relative to buf. */
int efivarfs_parse(const char *file_name, const uint8_t *buf, size_t len, vs_var *v, rs_error *err);
/* Loads every variable of the directory, sorted by name then GUID. */
int efivarfs_load(const char *dir, varstore *vs, rs_error *err);
/* Whether this machine was booted through UEFI (the kernel shows
 * /sys/firmware/efi), so its variables are the natural default store. */
bool efivarfs_booted_uefi(void);

#endif

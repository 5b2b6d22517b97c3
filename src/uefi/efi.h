/* UEFI basics shared by the signature-list, variable and store code:
 * GUIDs as they sit in memory, EFI_TIME, and little-endian fields. */
#ifndef RS_UEFI_EFI_H
#define RS_UEFI_EFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "base/error.h"

/* A GUID in its on-disk form: Data1..3 little-endian, Data4 as bytes. */
typedef struct efi_guid {
    uint8_t b[16];
} efi_guid;

#define EFI_GUID_STR 37

extern const efi_guid efi_guid_global;          /* 8be4df61-...: PK, KEK */
extern const efi_guid efi_guid_image_security;  /* d719b2cb-...: db, dbx */
extern const efi_guid efi_guid_cert_x509;
extern const efi_guid efi_guid_cert_sha1;
extern const efi_guid efi_guid_cert_sha256;
extern const efi_guid efi_guid_cert_sha384;
extern const efi_guid efi_guid_cert_sha512;
extern const efi_guid efi_guid_cert_x509_sha256;
extern const efi_guid efi_guid_cert_pkcs7;
extern const efi_guid efi_guid_auth_var_store;  /* gEfiAuthenticatedVariableGuid */
extern const efi_guid efi_guid_nv_data_fv;      /* gEfiSystemNvDataFvGuid */
extern const efi_guid efi_guid_shim_lock;       /* MokList, MokListX, SbatLevel, ... */

/* Parses "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx". */
int efi_guid_parse(const char *s, efi_guid *out, rs_error *err);
void efi_guid_format(const efi_guid *g, char out[EFI_GUID_STR]);
bool efi_guid_equal(const efi_guid *a, const efi_guid *b);
/* A readable name for well-known GUIDs, or NULL. */
const char *efi_guid_name(const efi_guid *g);

#define EFI_VARIABLE_NON_VOLATILE 0x01u
#define EFI_VARIABLE_BOOTSERVICE_ACCESS 0x02u
#define EFI_VARIABLE_RUNTIME_ACCESS 0x04u
#define EFI_VARIABLE_TIME_BASED_AUTHENTICATED_WRITE_ACCESS 0x20u
#define EFI_VARIABLE_APPEND_WRITE 0x40u
/* What PK, KEK, db and dbx are always written with. */
#define EFI_SECURE_VAR_ATTRS 0x27u

/* EFI_TIME: 16 bytes, as used in time-based authenticated variables. */
#define EFI_TIME_SIZE 16
void efi_time_from_unix(time_t t, uint8_t out[EFI_TIME_SIZE]);
/* "YYYY-MM-DDTHH:MM:SSZ" (the nanosecond and zone fields are ignored). */
void efi_time_format(const uint8_t t[EFI_TIME_SIZE], char out[32]);
/* The EFI_TIME as Unix seconds; false when it is all zero (no time, as in
 * most variables that are not time-authenticated) or not a valid date. */
bool efi_time_to_unix(const uint8_t t[EFI_TIME_SIZE], time_t *out);

/* Orders two EFI_TIMEs as firmware does (year down to second). */
int efi_time_compare(const uint8_t a[EFI_TIME_SIZE], const uint8_t b[EFI_TIME_SIZE]);

/* The standard variables that hold signature lists, with their GUIDs. */
int efi_secure_var(const char *name, const efi_guid **guid, rs_error *err);

static inline uint16_t efi_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t efi_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t efi_le64(const uint8_t *p)
{
    return (uint64_t)efi_le32(p) | (uint64_t)efi_le32(p + 4) << 32;
}

static inline void efi_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void efi_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void efi_put64(uint8_t *p, uint64_t v)
{
    efi_put32(p, (uint32_t)v);
    efi_put32(p + 4, (uint32_t)(v >> 32));
}

#endif

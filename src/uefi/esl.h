/* EFI_SIGNATURE_LIST: the contents of PK, KEK, db and dbx. A buffer holds
 * lists back to back; each list has one signature type and entries of one
 * size, each an owner GUID followed by the data (a DER certificate or a
 * hash). */
#ifndef RS_UEFI_ESL_H
#define RS_UEFI_ESL_H

#include "base/bytes.h"
#include "crypto/digest.h"
#include "uefi/efi.h"

#define ESL_HEADER 28

typedef struct esl_entry {
    efi_guid type;
    efi_guid owner;
    const uint8_t *data;     /* borrowed from the walked buffer */
    size_t len;
    size_t list;             /* index of its list */
} esl_entry;

typedef int (*esl_visit)(void *ctx, const esl_entry *e, rs_error *err);

/* Validates every list header and calls visit (if not NULL) for each entry; stops at
 * the first error (visit's or the parser's). */
int esl_walk(const uint8_t *buf, size_t len, esl_visit visit, void *ctx, rs_error *err);

/* The hash algorithm of a hash list type, or NULL for other types. */
const EVP_MD *esl_hash_md(const efi_guid *type);

/* Appends one list holding one X.509 certificate (DER). */
int esl_append_x509(rs_bytes *out, const efi_guid *owner, const uint8_t *der, size_t len, rs_error *err);
/* Appends one list holding n hashes of the same algorithm. */
int esl_append_hashes(rs_bytes *out, const efi_guid *owner, const rs_digest *hashes, size_t n, rs_error *err);

#endif

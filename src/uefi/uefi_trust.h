/* Loads firmware's signature databases into an rs_trust: db certificates
 * become anchors and db hashes allowed image hashes; dbx certificates,
 * certificate TBS hashes and image hashes become revocations. */
#ifndef RS_UEFI_TRUST_H
#define RS_UEFI_TRUST_H

#include <stdbool.h>

#include "crypto/trust.h"
#include "uefi/varstore.h"

int uefi_trust_add_esl(rs_trust *t, const uint8_t *buf, size_t len, bool dbx, rs_error *err);
int uefi_trust_add_esl_file(rs_trust *t, const char *path, bool dbx, rs_error *err);
/* db and dbx of a variable store; a store without db is an error (there
 * would be nothing to trust). */
int uefi_trust_add_varstore(rs_trust *t, const char *path, rs_error *err);
/* The same from a running machine's efivarfs (efivarfs.h). */
int uefi_trust_add_efivarfs(rs_trust *t, const char *dir, rs_error *err);
/* Reads a whole signature-list file (bounded). */
int uefi_read_esl_file(const char *path, rs_bytes *out, rs_error *err);

#endif

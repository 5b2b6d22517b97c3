/* Applies an authenticated write (EFI_VARIABLE_AUTHENTICATION_2 payload) to
 * PK, KEK, db or dbx in a variable store, with the checks firmware makes:
 * PK is signed by the current PK (in Setup Mode, by the certificate it
 * installs), KEK by PK, db and dbx by a KEK or PK; a replacement must be
 * newer than the stored timestamp; an append adds only the entries not
 * already present. */
#ifndef RS_UEFI_VARUPDATE_H
#define RS_UEFI_VARUPDATE_H

#include "uefi/varstore.h"

typedef struct uefi_update {
    bool append;             /* the payload was signed with APPEND_WRITE */
    char *signer;            /* its subject */
} uefi_update;

int uefi_apply_auth(varstore *vs, const char *name, const uint8_t *auth, size_t len, uefi_update *out,
                    rs_error *err);
void uefi_update_free(uefi_update *u);

/* Appends the lists of add to base, leaving out entries base already has
 * (edk2's filter for APPEND_WRITE to signature databases). */
int esl_merge(const uint8_t *base, size_t base_len, const uint8_t *add, size_t add_len, rs_bytes *out,
              rs_error *err);

#endif

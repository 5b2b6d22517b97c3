/* Time-based authenticated variable writes (EFI_VARIABLE_AUTHENTICATION_2,
 * UEFI 2.x section 8.2.2): EFI_TIME, a WIN_CERTIFICATE_UEFI_GUID holding a
 * detached PKCS#7 SignedData (without the ContentInfo wrapper, as efitools
 * and sbsigntool write it), then the new variable data. The signature
 * covers name (UTF-16, no NUL) || vendor GUID || attributes || time || data. */
#ifndef RS_UEFI_AUTHVAR_H
#define RS_UEFI_AUTHVAR_H

#include "base/bytes.h"
#include "crypto/signer.h"
#include "crypto/trust.h"
#include "uefi/efi.h"

#define AUTHVAR_HEADER (EFI_TIME_SIZE + 24)

typedef struct authvar_target {
    const char *name;            /* ASCII variable name */
    const efi_guid *guid;
    uint32_t attributes;         /* as passed to SetVariable, APPEND_WRITE included */
    uint8_t timestamp[EFI_TIME_SIZE];
} authvar_target;

/* Builds the whole SetVariable payload: the authentication header, then data. */
int authvar_sign(const authvar_target *t, const uint8_t *data, size_t len, rs_signer *signer, rs_bytes *out,
                 rs_error *err);

typedef struct authvar {
    uint8_t timestamp[EFI_TIME_SIZE];
    const uint8_t *pkcs7;        /* borrowed from the parsed buffer */
    size_t pkcs7_len;
    const uint8_t *data;
    size_t data_len;
} authvar;

/* Checks the header's lengths and fixed fields; does not verify. */
int authvar_parse(const uint8_t *buf, size_t len, authvar *out, rs_error *err);

/* Verifies the signature for target (whose timestamp is taken from a) and
 * its chain to an anchor of trust. Sets *signer to the signer's subject. */
int authvar_verify(const authvar *a, const char *name, const efi_guid *guid, uint32_t attributes,
                   const rs_trust *trust, char **signer, rs_error *err);

/* The signer's certificate (a new reference), without verifying anything. */
int authvar_signer(const authvar *a, X509 **cert, rs_error *err);

#endif

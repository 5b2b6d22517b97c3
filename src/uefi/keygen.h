/* Secure Boot keys from scratch: PK, KEK and db key pairs with
 * self-signed certificates, one owner GUID for every list, and the signed
 * updates (PK self-signed, KEK by PK, db by KEK) that enroll them on a
 * machine in setup mode. */
#ifndef RS_UEFI_KEYGEN_H
#define RS_UEFI_KEYGEN_H

#include <stdint.h>

#include "base/error.h"
#include "uefi/efi.h"

typedef struct uefi_keygen_options {
    const char *dir;             /* created; must not exist, or be empty */
    int bits;                    /* RSA: 2048 (what firmware expects) or 4096 */
    const char *token;           /* a pkcs11: URI: the keys are made there */
    const char *common_name;     /* the certificates' CN prefix */
    uint8_t timestamp[EFI_TIME_SIZE];   /* of the signed updates */
} uefi_keygen_options;

/* Writes DIR/{PK,KEK,db}.{key,crt,cer,esl,auth} and DIR/GUID. Keys are
 * 0600. With a token the keys are generated on it instead, labelled PK,
 * KEK and db, and their certificates stored beside them (DIR has no .key
 * files). Nothing is left behind on failure, on disk or on the token. */
int uefi_keygen(const uefi_keygen_options *o, rs_error *err);

#endif

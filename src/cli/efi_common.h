/* Shared by the `reprosign efi` subcommands (cmd_efi_*.c). */
#ifndef RS_EFI_COMMON_H
#define RS_EFI_COMMON_H

#include <stdint.h>

#include "base/bytes.h"
#include "base/error.h"
#include "cli/cli.h"
#include "uefi/efi.h"

#define MAX_AUTH_FILE (16u * 1024 * 1024)

/* T is Unix seconds, "YYYY-MM-DD HH:MM:SS" or "YYYY-MM-DDTHH:MM:SSZ";
 * NULL means SOURCE_DATE_EPOCH, else the clock. */
int efi_parse_timestamp(const char *s, uint8_t out[EFI_TIME_SIZE], rs_error *err);
/* NULL means the default owner GUID. */
int efi_parse_owner(const char *s, efi_guid *owner, rs_error *err);
int efi_write_output(const char *path, const rs_bytes *b, rs_error *err);
/* Appends one X.509 signature list per certificate in the file at path. */
int efi_append_cert_lists(rs_bytes *esl, const char *path, const efi_guid *owner, rs_error *err);

extern const rs_command cmd_efi_siglist, cmd_efi_sign_var, cmd_efi_list, cmd_efi_db, cmd_efi_enroll, cmd_efi_apply,
    cmd_efi_shim_var, cmd_efi_keygen;

#endif

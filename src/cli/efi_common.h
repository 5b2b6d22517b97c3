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

/* The options of the commands that write one variable into a store
 * (apply, shim-var): --vars, --name and --output, and one FILE. */
extern const struct option efi_store_write_longopts[];
typedef struct efi_store_write_args {
    const char *vars, *name, *file, *output;
} efi_store_write_args;
/* -1 when parsed, else the exit status (help shown, or a usage error
 * saying that FILE is what).*/
int efi_parse_store_write(const rs_command *cmd, int argc, char **argv, const char *file_is, efi_store_write_args *a);

/* What to do next in setup mode, for efi list and chain: on a running
 * machine, and for a variable store file. */
extern const char efi_setup_mode_advice[];
extern const char efi_setup_mode_advice_store[];

extern const rs_command cmd_efi_siglist, cmd_efi_sign_var, cmd_efi_list, cmd_efi_db, cmd_efi_enroll, cmd_efi_apply,
    cmd_efi_shim_var, cmd_efi_keygen;

#endif

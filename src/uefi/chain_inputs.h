/* Loading chain_inputs: signature lists from files, an SbatLevel from a
 * file, or all of db, dbx, MokList, MokListX, SbatLevel, SbatPolicy,
 * MokSBState and MokDBState (MokIgnoreDB) from an OVMF variable store or
 * a running machine's efivarfs. */
#ifndef RS_UEFI_CHAIN_INPUTS_H
#define RS_UEFI_CHAIN_INPUTS_H

#include "uefi/chain.h"
#include "uefi/efi.h"

/* The attributes shim requires of its variables: non-volatile and
 * boot-service only (mok.c yes_attr, no_attr = RUNTIME_ACCESS). */
#define SHIM_VAR_ATTRS (EFI_VARIABLE_NON_VOLATILE | EFI_VARIABLE_BOOTSERVICE_ACCESS)

typedef enum chain_var { CHAIN_DB, CHAIN_DBX, CHAIN_MOK, CHAIN_MOKX } chain_var;

int chain_inputs_add_esl_file(chain_inputs *in, chain_var var, const char *path, rs_error *err);
int chain_inputs_set_sbat_level_file(chain_inputs *in, const char *path, rs_error *err);
int chain_inputs_add_varstore(chain_inputs *in, const char *path, rs_error *err);
/* The same from a running machine's efivarfs (efivarfs.h): shim's
 * runtime mirrors (MokListRT, MokListXRT, SbatLevelRT, ...) stand for its
 * variables. */
int chain_inputs_add_efivarfs(chain_inputs *in, const char *dir, rs_error *err);

#endif

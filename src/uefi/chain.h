/* A Secure Boot chain judged stage by stage, each stage by whoever
 * verifies it on a real boot (see the rule table in `reprosign help
 * chain`):
 * - stage 1 is loaded by firmware: EDK2's db/dbx rules;
 * - if stage 1 is shim, stage 2 is loaded by shim itself (GRUB, fb, mm):
 *   shim's checks, with a .sbat section required;
 * - later stages are verified by shim for the one before (GRUB's
 *   shim_lock verify, or shim's LoadImage hook): the same checks, with
 *   .sbat optional;
 * - if stage 1 is GRUB without shim, it refuses to boot any kernel;
 * - otherwise later stages are loaded by firmware again. */
#ifndef RS_UEFI_CHAIN_H
#define RS_UEFI_CHAIN_H

#include "base/bytes.h"
#include "crypto/trust.h"
#include "uefi/kernel_keys.h"

/* What firmware flash holds, as files or read from a variable store. */
typedef struct chain_inputs {
    rs_bytes db, dbx, mok, mokx; /* ESL bytes, lists back to back */
    bool have_db;
    char *sbat_level;            /* SbatLevel variable, or NULL */
    bool sbat_level_attrs_ok;
    int sbat_policy;             /* 0 when absent */
    bool ignore_db;              /* MokIgnoreDB */
    bool insecure;               /* MokSBState */
    bool require_nx;             /* MokPolicy bit 0, MOK_POLICY_REQUIRE_NX */
    bool from_machine;           /* read from a running machine's efivarfs, */
    bool secure_boot, setup_mode; /* whose SecureBoot and SetupMode were 1 */
} chain_inputs;

void chain_inputs_free(chain_inputs *in);

typedef struct chain_stage {
    const char *path;
    const char *verifier;        /* who checks it: "firmware (EDK2)", "shim", ... */
    bool ok;
    char *anchor;                /* what admitted it */
    char rule[96];               /* the rule that decided */
    char reason[RS_ERROR_MAX];   /* why it was refused */
    char sbat[RS_ERROR_MAX];     /* the SBAT verdict, when SBAT applies */
} chain_stage;

typedef struct chain_result {
    chain_stage *stages;
    size_t n;
    bool shim;                   /* stage 1 is shim */
    bool vendor_cert;            /* ... with a .vendor_cert section */
    char sbat_source[160];       /* which SBAT level applied */
    rs_bytes vendor_authorized;  /* shim's vendor_cert or vendor_db blob */
    bool ok;
} chain_result;

int chain_verify(const chain_inputs *in, char *const *paths, size_t n, chain_result *out, rs_error *err);
void chain_result_free(chain_result *r);

/* The module keyrings of the kernel this chain boots: its built-in keys
 * from the file `builtin`, or else read out of the last stage's image. */
int chain_kernel_keys(const chain_inputs *in, const chain_result *r, const char *builtin, kernel_keys *k,
                      rs_error *err);

#endif

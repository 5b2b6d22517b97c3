/* A Secure Boot chain as firmware and shim walk it: the first image must
 * pass db/dbx; if it is shim, its vendor certificate joins db and its
 * vendor dbx joins dbx for the images it loads, and its SBAT level
 * (.sbatlevel "previous", as shim applies by default) revokes old
 * generations of the later images. */
#ifndef RS_UEFI_CHAIN_H
#define RS_UEFI_CHAIN_H

#include "crypto/trust.h"

typedef struct chain_stage {
    const char *path;
    bool ok;
    char *anchor;                /* what admitted it */
    char reason[RS_ERROR_MAX];
} chain_stage;

typedef struct chain_result {
    chain_stage *stages;
    size_t n;
    bool vendor_cert;            /* the first image carried shim's keys */
    bool sbat_level;             /* ... and an SBAT level */
    bool ok;
} chain_result;

int chain_verify(const rs_trust *firmware, char *const *paths, size_t n, chain_result *out, rs_error *err);
void chain_result_free(chain_result *r);

#endif

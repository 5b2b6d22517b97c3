/* OpenPGP detached signatures are checked by gpgv, the verifier apt and
 * dak use, never by code of our own. */
#ifndef RS_GPGV_H
#define RS_GPGV_H

#include "base/bytes.h"
#include "base/error.h"

#include <time.h>

/* Verifies sig over data with the keys in keyring. Both are handed to
 * gpgv from memory, so what was checked is exactly what the caller holds.
 * gpgv's exit status is not enough (it accepts a signature by an expired
 * key): its --status-fd lines must say GOODSIG and VALIDSIG, and nothing
 * of BADSIG, ERRSIG, EXPSIG, EXPKEYSIG, REVKEYSIG or NO_PUBKEY. *signed_at
 * (may be NULL) receives the signature's creation time. */
int rs_gpgv_verify(const char *keyring, const rs_bytes *data, const rs_bytes *sig, time_t *signed_at,
                   rs_error *err);

/* The status lines' verdict, for the fuzzer and the tests. */
int rs_gpgv_judge(const char *status, size_t len, time_t *signed_at, rs_error *err);

#endif

/* OpenPGP detached signatures are checked by gpgv, the verifier apt and
 * dak use, never by code of our own. */
#ifndef RS_GPGV_H
#define RS_GPGV_H

#include "base/bytes.h"
#include "base/error.h"

/* Verifies sig over data with the keys in keyring. Both are handed to
 * gpgv from memory, so what was checked is exactly what the caller holds. */
int rs_gpgv_verify(const char *keyring, const rs_bytes *data, const rs_bytes *sig, rs_error *err);

#endif

/* Passphrases of encrypted key files (PEM, PKCS#8). Never from argv (ps
 * and shell history show it). In order: --pass file:PATH or env:VAR
 * (OpenSSL's -passin conventions), the KBUILD_SIGN_PIN variable (as the
 * kernel's sign-file reads it), a prompt on the terminal with echo off. */
#ifndef RS_PASSPHRASE_H
#define RS_PASSPHRASE_H

#include "base/error.h"
#include "crypto/pkcs11_pin.h"

#define RS_PASSPHRASE_ENV "KBUILD_SIGN_PIN"

/* Checks and keeps a --pass value for this process's key files;
 * "pass:..." (the passphrase itself on argv) is refused. */
int rs_passphrase_set_source(const char *spec, rs_error *err);

/* The passphrase for the key file at path, into out (wiped by the caller
 * with rs_p11_pin_wipe). */
int rs_passphrase_get(const char *path, rs_p11_pin *out, rs_error *err);

#endif

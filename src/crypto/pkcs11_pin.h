/* Token PINs. They never come from a plain command-line argument (it would
 * show in ps and shell history). In order of preference: the URI's
 * pin-value (meant for tests), its pin-source=file:, the environment
 * variable REPROSIGN_PKCS11_PIN, a prompt on /dev/tty with echo off.
 * The PIN lives in one fixed buffer that is wiped when it goes out of
 * scope, so no stray heap copies are left behind. */
#ifndef RS_PKCS11_PIN_H
#define RS_PKCS11_PIN_H

#include <p11-kit/uri.h>
#include <stddef.h>

#include "base/error.h"

#define RS_P11_PIN_MAX 256
#define RS_P11_PIN_ENV "REPROSIGN_PKCS11_PIN"

typedef struct rs_p11_pin {
    char value[RS_P11_PIN_MAX];
    size_t len;
} rs_p11_pin;

/* Gets the PIN for the token labelled `token` (used in the prompt). */
int rs_p11_pin_get(P11KitUri *uri, const char *token, rs_p11_pin *pin, rs_error *err);
void rs_p11_pin_wipe(rs_p11_pin *pin);
/* Shared with key-file passphrases (crypto/passphrase.h): a secret from
 * a string, from a file (one line; its ending dropped), or typed on the
 * terminal with echo off after prompt (hint: what to do without one). */
int rs_secret_set(rs_p11_pin *out, const char *value, const char *from, rs_error *err);
int rs_secret_from_file(const char *path, rs_p11_pin *out, rs_error *err);
int rs_secret_from_tty(const char *prompt, const char *hint, rs_p11_pin *out, rs_error *err);

/* Once every key is open: wipes REPROSIGN_PKCS11_PIN's value in place
 * (so /proc/PID/environ no longer shows it either) and unsets it. */
void rs_p11_pin_scrub_env(void);
#define _cleanup_pin_ __attribute__((cleanup(rs_p11_pin_wipe)))

#endif

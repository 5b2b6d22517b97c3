/* OpenPGP clearsigning through GPGME, for the service's uploads: the key
 * is named by fingerprint in a GnuPG home, so it may be a file key or sit
 * on an OpenPGP card behind gpg-agent; no passphrase passes through here. */
#ifndef RS_GPGME_SIGN_H
#define RS_GPGME_SIGN_H

#include "base/error.h"

/* Replaces `path` by its clearsigned form (temp file + rename). gnupg_home
 * NULL means GnuPG's default. Fails, leaving `path` as it was, if the key
 * is missing, cannot sign, or no good signature was made. gpg and the
 * gpg-agent it starts get the children's environment (base/child_env.h),
 * not the caller's. */
int rs_gpgme_clearsign(const char *gnupg_home, const char *fingerprint, const char *path, rs_error *err);

#endif

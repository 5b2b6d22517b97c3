/* An image signer (ops/image_signer.h) whose key stays in the signing
 * service: each signature is one request over the service's socket. */
#ifndef RS_REMOTE_SIGNER_H
#define RS_REMOTE_SIGNER_H

#include "ops/image_signer.h"

/* Connects now, so a wrong socket fails before any work (a refused uid
 * learns why with its first request); threads signing at once get a
 * connection each. cert names the
 * service's key; chain (may be NULL) is embedded in the signatures. Both
 * are referenced, not taken over. */
int rs_image_signer_remote(const char *socket, X509 *cert, STACK_OF(X509) *chain, rs_image_signer **out,
                           rs_error *err);

#endif

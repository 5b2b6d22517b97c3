/* The signer a signing command was given: a local key (--key) or the
 * signing service's socket (--via), exactly one, with the certificate
 * (--cert) and extra certificates to embed (--addcert, may be NULL). */
#ifndef RS_CLI_SIGNER_ARGS_H
#define RS_CLI_SIGNER_ARGS_H

#include "ops/image_signer.h"

typedef struct cli_signer {
    rs_image_signer *image;      /* what the command signs with */
    rs_signer *key;              /* what it holds on to */
    X509 *cert;
    STACK_OF(X509) *chain;
} cli_signer;

int cli_signer_open(cli_signer *s, const char *key, const char *via, const char *cert, const char *addcert,
                    rs_error *err);
void cli_signer_close(cli_signer *s);

/* --pass SPEC for an encrypted key file (crypto/passphrase.h): 0, or a
 * usage error's exit status. */
struct rs_command;
int cli_set_pass(const struct rs_command *cmd, const char *spec);

#endif

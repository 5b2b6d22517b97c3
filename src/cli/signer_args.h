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

/* The option docs of --key and --pass, alike in every command that signs
 * with a key (an entry list for a command's .optdocs). */
#define CLI_KEY_DOCS                                                                                \
    { "key", "KEY", "The signing key: a PEM or DER file, or a pkcs11: URI (see 'reprosign token list').", \
      NULL },                                                                                         \
    { "pass", "file:PATH|env:VAR",                                                                    \
      "Where an encrypted key file's passphrase comes from; never on the command line.",              \
      "KBUILD_SIGN_PIN, else a prompt on the terminal" }

/* --pass SPEC for an encrypted key file (crypto/passphrase.h): 0, or a
 * usage error's exit status. */
struct rs_command;
int cli_set_pass(const struct rs_command *cmd, const char *spec);

#endif

#include "cli/signer_args.h"

#include "cli/cli.h"
#include "crypto/ossl.h"
#include "crypto/passphrase.h"
#include "service/remote_signer.h"

int cli_signer_open(cli_signer *s, const char *key, const char *via, const char *cert, const char *addcert,
                    rs_error *err)
{
    *s = (cli_signer){ 0 };
    if (via) {
        if (rs_cert_open(cert, &s->cert, err) < 0 || (addcert && rs_load_certs(addcert, &s->chain, err) < 0))
            return -1;
        return rs_image_signer_remote(via, s->cert, s->chain, &s->image, err);
    }
    if (rs_signer_open(key, cert, &s->key, err) < 0 || (addcert && rs_signer_add_chain(s->key, addcert, err) < 0))
        return -1;
    return rs_image_signer_local(s->key, &s->image, err);
}

void cli_signer_close(cli_signer *s)
{
    /* The image signer first: it refers to the rest. */
    rs_image_signerp(&s->image);
    rs_signerp(&s->key);
    rs_x509p(&s->cert);
    rs_x509_stackp(&s->chain);
    *s = (cli_signer){ 0 };
}

int cli_set_pass(const struct rs_command *cmd, const char *spec)
{
    rs_error err;

    return rs_passphrase_set_source(spec, &err) < 0 ? cli_usage(cmd, "%s", err.msg) : 0;
}

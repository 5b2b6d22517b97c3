#include "crypto/trust.h"

#include <stdlib.h>

#include "crypto/ossl.h"

int rs_trust_init(rs_trust *t, rs_error *err)
{
    t->anchors = sk_X509_new_null();
    return t->anchors ? 0 : rs_fail(err, "out of memory");
}

void rs_trust_free(rs_trust *t)
{
    if (t->anchors)
        sk_X509_pop_free(t->anchors, X509_free);
    t->anchors = NULL;
}

int rs_trust_add_file(rs_trust *t, const char *path, rs_error *err)
{
    _cleanup_(rs_x509_stackp) STACK_OF(X509) *certs = NULL;
    X509 *c;

    if (rs_load_certs(path, &certs, err) < 0)
        return -1;
    while ((c = sk_X509_shift(certs)) != NULL)
        if (!sk_X509_push(t->anchors, c)) {
            X509_free(c);
            return rs_fail(err, "out of memory");
        }
    return 0;
}

static X509 *chain_anchor(X509_STORE_CTX *ctx)
{
    STACK_OF(X509) *chain = X509_STORE_CTX_get0_chain(ctx);
    int n = chain ? sk_X509_num(chain) : 0;

    return n ? sk_X509_value(chain, n - 1) : NULL;
}

int rs_trust_chain(const rs_trust *t, X509 *signer, STACK_OF(X509) *untrusted, char **anchor, rs_error *err)
{
    _cleanup_(rs_storep) X509_STORE *store = X509_STORE_new();
    _cleanup_(rs_storectxp) X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    X509 *top;

    if (!store || !ctx)
        return rs_fail(err, "out of memory");
    for (int i = 0; i < sk_X509_num(t->anchors); i++)
        if (!X509_STORE_add_cert(store, sk_X509_value(t->anchors, i)))
            return rs_fail_ssl(err, "cannot add trust anchor");
    X509_STORE_set_flags(store, X509_V_FLAG_PARTIAL_CHAIN | X509_V_FLAG_NO_CHECK_TIME);
    if (!X509_STORE_CTX_init(ctx, store, signer, untrusted))
        return rs_fail_ssl(err, "cannot set up chain verification");
    /* Code-signing certificates carry all sorts of key usages; firmware
     * checks none of them. */
    X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_ANY);
    if (X509_verify_cert(ctx) != 1) {
        int code = X509_STORE_CTX_get_error(ctx);

        return rs_fail(err, "signer does not chain to a trusted certificate (%s)",
                       X509_verify_cert_error_string(code));
    }
    top = chain_anchor(ctx);
    if (anchor)
        *anchor = top ? rs_x509_name(X509_get_subject_name(top)) : NULL;
    return 0;
}

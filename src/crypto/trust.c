#include "crypto/trust.h"

#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/ossl.h"

int rs_trust_init(rs_trust *t, rs_error *err)
{
    memset(t, 0, sizeof(*t));
    t->anchors = sk_X509_new_null();
    t->revoked = sk_X509_new_null();
    return t->anchors && t->revoked ? 0 : rs_fail(err, "out of memory");
}

static void digest_list_free(rs_digest_list *l)
{
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

void rs_trust_free(rs_trust *t)
{
    if (t->anchors)
        sk_X509_pop_free(t->anchors, X509_free);
    if (t->revoked)
        sk_X509_pop_free(t->revoked, X509_free);
    t->anchors = t->revoked = NULL;
    digest_list_free(&t->allowed);
    digest_list_free(&t->forbidden);
    digest_list_free(&t->revoked_tbs);
}

static int push_ref(STACK_OF(X509) *stack, X509 *cert, rs_error *err)
{
    if (!X509_up_ref(cert))
        return rs_fail_ssl(err, "cannot reference certificate");
    if (!sk_X509_push(stack, cert)) {
        X509_free(cert);
        return rs_fail(err, "out of memory");
    }
    return 0;
}

int rs_trust_add_anchor(rs_trust *t, X509 *cert, rs_error *err)
{
    return push_ref(t->anchors, cert, err);
}

int rs_trust_add_revoked(rs_trust *t, X509 *cert, rs_error *err)
{
    return push_ref(t->revoked, cert, err);
}

int rs_trust_add_hash(rs_digest_list *list, const rs_digest *d, rs_error *err)
{
    rs_digest *grown = reallocarray(list->items, list->n + 1, sizeof(*grown));

    if (!grown)
        return rs_fail(err, "out of memory");
    list->items = grown;
    list->items[list->n++] = *d;
    return 0;
}

static int merge_list(rs_digest_list *dst, const rs_digest_list *src, rs_error *err)
{
    for (size_t i = 0; i < src->n; i++)
        if (rs_trust_add_hash(dst, &src->items[i], err) < 0)
            return -1;
    return 0;
}

int rs_trust_merge(rs_trust *dst, const rs_trust *src, rs_error *err)
{
    for (int i = 0; i < sk_X509_num(src->anchors); i++)
        if (rs_trust_add_anchor(dst, sk_X509_value(src->anchors, i), err) < 0)
            return -1;
    for (int i = 0; i < sk_X509_num(src->revoked); i++)
        if (rs_trust_add_revoked(dst, sk_X509_value(src->revoked, i), err) < 0)
            return -1;
    if (merge_list(&dst->allowed, &src->allowed, err) < 0 || merge_list(&dst->forbidden, &src->forbidden, err) < 0)
        return -1;
    return merge_list(&dst->revoked_tbs, &src->revoked_tbs, err);
}

bool rs_trust_has_lists(const rs_trust *t)
{
    return sk_X509_num(t->revoked) > 0 || t->allowed.n || t->forbidden.n || t->revoked_tbs.n;
}

bool rs_trust_hash_listed(const rs_digest_list *list, const rs_digest *d)
{
    for (size_t i = 0; i < list->n; i++)
        if (rs_digest_equal(&list->items[i], d))
            return true;
    return false;
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

static int chain_to(STACK_OF(X509) *anchors, X509 *signer, STACK_OF(X509) *untrusted, char **anchor, rs_error *err)
{
    _cleanup_(rs_storep) X509_STORE *store = X509_STORE_new();
    _cleanup_(rs_storectxp) X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    X509 *top;

    if (!store || !ctx)
        return rs_fail(err, "out of memory");
    for (int i = 0; i < sk_X509_num(anchors); i++)
        if (!X509_STORE_add_cert(store, sk_X509_value(anchors, i)))
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

int rs_trust_chain(const rs_trust *t, X509 *signer, STACK_OF(X509) *untrusted, char **anchor, rs_error *err)
{
    return chain_to(t->anchors, signer, untrusted, anchor, err);
}

/* dbx's EFI_CERT_X509_SHA256 entries hash the TBSCertificate. */
static bool tbs_revoked(const rs_trust *t, X509 *cert)
{
    unsigned char *tbs = NULL;
    rs_digest d = { .md = EVP_sha256(), .len = SHA256_DIGEST_LENGTH };
    int len;
    bool ok;

    if (!t->revoked_tbs.n)
        return false;
    len = i2d_re_X509_tbs(cert, &tbs);
    ok = len > 0 && EVP_Digest(tbs, (size_t)len, d.bytes, NULL, d.md, NULL);
    OPENSSL_free(tbs);
    return ok && rs_trust_hash_listed(&t->revoked_tbs, &d);
}

static bool listed(const rs_trust *t, X509 *cert)
{
    for (int i = 0; i < sk_X509_num(t->revoked); i++)
        if (!X509_cmp(cert, sk_X509_value(t->revoked, i)))
            return true;
    return tbs_revoked(t, cert);
}

bool rs_trust_revokes(const rs_trust *t, X509 *signer, STACK_OF(X509) *untrusted, char **which)
{
    rs_error ignored;

    *which = NULL;
    if (listed(t, signer)) {
        *which = rs_x509_name(X509_get_subject_name(signer));
        return true;
    }
    for (int i = 0; i < sk_X509_num(untrusted); i++)
        if (listed(t, sk_X509_value(untrusted, i))) {
            *which = rs_x509_name(X509_get_subject_name(sk_X509_value(untrusted, i)));
            return true;
        }
    /* A revoked issuer that the signature does not carry still counts. */
    return sk_X509_num(t->revoked) > 0 && chain_to(t->revoked, signer, untrusted, which, &ignored) == 0;
}

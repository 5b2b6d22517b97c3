#include "pipeline/embedded_trust_check.h"

#include <string.h>

#include "base/cleanup.h"
#include "crypto/ossl.h"
#include "uefi/embedded_trust.h"

static bool listed(char *const *list, size_t n, const char *fpr)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(list[i], fpr))
            return true;
    return false;
}

int rs_check_embedded_trust(rs_image *img, const rs_sign_package *pkg, const char *path, char *const *allowed,
                            size_t n_allowed, rs_error *err)
{
    STACK_OF(X509) *certs = NULL;
    int rc = 0;

    if (uefi_embedded_certs(img, &certs, err) < 0)
        return rs_error_prefix(err, "package %s: %s", pkg->name, path);
    for (int i = 0; rc == 0 && i < sk_X509_num(certs); i++) {
        X509 *c = sk_X509_value(certs, i);
        char fpr[65], subject[256] = "";

        rs_x509_fingerprint(c, fpr);
        X509_NAME_oneline(X509_get_subject_name(c), subject, sizeof(subject));
        if (!listed(pkg->trusted_certs, pkg->n_trusted_certs, fpr))
            rc = rs_fail(err, "package %s: %s embeds the certificate %s (SHA-256 %s), which its trusted_certs "
                              "does not list", pkg->name, path, subject, fpr);
        else if (!listed(allowed, n_allowed, fpr))
            rc = rs_fail(err, "package %s: %s embeds the certificate %s (SHA-256 %s), which is not on the "
                              "allowlist", pkg->name, path, subject, fpr);
    }
    sk_X509_pop_free(certs, X509_free);
    return rc;
}

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

typedef struct trust_rule {
    const rs_sign_package *pkg;
    const char *path;
    char *const *allowed;
    size_t n_allowed;
} trust_rule;

/* where: "" or " at file offset N", for a certificate found by content. */
static int check_cert(const trust_rule *r, X509 *c, const char *where, rs_error *err)
{
    char fpr[65], subject[256] = "";

    rs_x509_fingerprint(c, fpr);
    X509_NAME_oneline(X509_get_subject_name(c), subject, sizeof(subject));
    if (!listed(r->pkg->trusted_certs, r->pkg->n_trusted_certs, fpr))
        return rs_fail(err, "package %s: %s embeds the certificate %s (SHA-256 %s)%s, which its trusted_certs "
                            "does not list", r->pkg->name, r->path, subject, fpr, where);
    if (!listed(r->allowed, r->n_allowed, fpr))
        return rs_fail(err, "package %s: %s embeds the certificate %s (SHA-256 %s)%s, which is not on the "
                            "allowlist", r->pkg->name, r->path, subject, fpr, where);
    return 0;
}

/* The rule by name: shim's .vendor_cert, read as shim reads it (and the
 * whole rule for kernels). */
static int check_named(const trust_rule *r, rs_image *img, rs_error *err)
{
    STACK_OF(X509) *certs = NULL;
    int rc = 0;

    if (uefi_embedded_certs(img, &certs, err) < 0)
        return rs_error_prefix(err, "package %s: %s", r->pkg->name, r->path);
    for (int i = 0; rc == 0 && i < sk_X509_num(certs); i++)
        rc = check_cert(r, sk_X509_value(certs, i), "", err);
    sk_X509_pop_free(certs, X509_free);
    return rc;
}

/* A hash list adds trust that trusted_certs, a list of certificates,
 * cannot declare; only shim's vendor dbx (revocations) may hold one. */
static int check_item(const trust_rule *r, const trust_scan *s, const trust_item *it, rs_error *err)
{
    char where[64];

    snprintf(where, sizeof(where), " at file offset %llu", (unsigned long long)it->off);
    if (it->cert)
        return check_cert(r, it->cert, where, err);
    if (it->hashes && !trust_scan_in_deauthorized(s, it->off, it->len))
        return rs_fail(err, "package %s: %s embeds an EFI signature list of image hashes (%llu bytes%s) outside "
                            "a certificate table's revocations: trusted_certs cannot declare the images it "
                            "would trust", r->pkg->name, r->path, (unsigned long long)it->len, where);
    return 0;
}

/* Found by content: every certificate declared, no hash list outside a
 * vendor dbx, at most one cert_table, and exactly one in a shim. */
static int check_content(const trust_rule *r, rs_image *img, rs_error *err)
{
    _cleanup_trust_scan_ trust_scan s;
    bool shim_like;
    int found;

    trust_scan_init(&s);
    if ((found = uefi_embedded_scan(img, &s, &shim_like, err)) <= 0)
        return found < 0 ? rs_error_prefix(err, "package %s: %s", r->pkg->name, r->path) : 0;
    for (size_t i = 0; i < s.n_items; i++)
        if (check_item(r, &s, &s.items[i], err) < 0)
            return -1;
    if (s.n_tables > 1)
        return rs_fail(err, "package %s: %s holds %zu certificate tables (at file offsets %llu and %llu): shim "
                            "reads one, and which one is not in the bytes", r->pkg->name, r->path, s.n_tables,
                       (unsigned long long)s.tables[0].off, (unsigned long long)s.tables[1].off);
    if (shim_like && s.n_tables != 1)
        return rs_fail(err, "package %s: %s looks like shim (a .vendor_cert section, or the MOK runtime "
                            "variables only shim makes) but holds no certificate table whose contents can be read",
                       r->pkg->name, r->path);
    return 0;
}

int rs_check_embedded_trust(rs_image *img, const rs_sign_package *pkg, const char *path, char *const *allowed,
                            size_t n_allowed, rs_error *err)
{
    trust_rule r = { pkg, path, allowed, n_allowed };

    if (check_named(&r, img, err) < 0)
        return -1;
    return check_content(&r, img, err);
}

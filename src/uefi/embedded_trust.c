#include "uefi/embedded_trust.h"

#include "base/cleanup.h"
#include "formats/pe/pe_sections.h"
#include "uefi/shim_db.h"

static int add_all(STACK_OF(X509) *to, STACK_OF(X509) *from, rs_error *err)
{
    return X509_add_certs(to, from, X509_ADD_FLAG_UP_REF) ? 0 : rs_fail(err, "out of memory");
}

int uefi_embedded_certs(rs_image *img, STACK_OF(X509) **out, rs_error *err)
{
    _cleanup_bytes_ rs_bytes sec = { 0 };
    _cleanup_shim_db_ shim_db db;
    STACK_OF(X509) *certs;
    int found;

    *out = NULL;
    if (shim_db_init(&db, err) < 0)
        return -1;
    if (!(certs = sk_X509_new_null()))
        return rs_fail(err, "out of memory");
    found = img->format == &rs_format_pe ? pe_image_section(img, ".vendor_cert", &sec, err) : 0;
    if (found < 0 || (found > 0 && (shim_db_add_vendor_cert(&db, sec.data, sec.len, err) < 0 ||
                                     add_all(certs, db.vendor_cert.anchors, err) < 0 ||
                                     add_all(certs, db.vendor_db.certs.anchors, err) < 0))) {
        sk_X509_pop_free(certs, X509_free);
        return rs_error_prefix(err, ".vendor_cert");
    }
    *out = certs;
    return 0;
}

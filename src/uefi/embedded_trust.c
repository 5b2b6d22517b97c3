#include "uefi/embedded_trust.h"

#include "base/cleanup.h"
#include "formats/pe/pe_sections.h"
#include "uefi/kernel_certs.h"
#include "uefi/shim_db.h"

/* No section of a real EFI binary comes near this (GRUB's largest, its
 * modules, is 3 MB); kernels, which do, are not scanned. A bound on what
 * is held at once. */
#define MAX_SCANNED_SECTION (64u * 1024 * 1024)

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

static int scan_sections(rs_image *img, trust_scan *s, rs_error *err)
{
    const uint8_t *headers;
    size_t len;

    pe_image_headers(img, &headers, &len);
    if (trust_scan_bytes(s, headers, len, 0, err) < 0)
        return rs_error_prefix(err, "its headers");
    for (size_t i = 0; i < pe_image_section_count(img); i++) {
        _cleanup_bytes_ rs_bytes sec = { 0 };
        uint64_t off;

        if (pe_image_section_raw(img, i, MAX_SCANNED_SECTION, &sec, &off, err) < 0 ||
            trust_scan_bytes(s, sec.data, sec.len, off, err) < 0)
            return rs_error_prefix(err, "section %zu", i);
    }
    return 0;
}

int uefi_embedded_scan(rs_image *img, trust_scan *s, bool *shim_like, rs_error *err)
{
    _cleanup_bytes_ rs_bytes vendor_cert = { 0 };
    int r;

    *shim_like = false;
    if (img->format != &rs_format_pe)
        return 0;
    if ((r = kernel_image_header(&img->in, err)) != 0)
        return r < 0 ? -1 : 0;
    if ((r = pe_image_section(img, ".vendor_cert", &vendor_cert, err)) < 0 || scan_sections(img, s, err) < 0)
        return -1;
    *shim_like = r > 0 || s->mok_mirrors;
    return 1;
}

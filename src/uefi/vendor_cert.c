#include "uefi/vendor_cert.h"

#include <openssl/err.h>

#include "crypto/ossl.h"
#include "formats/pe/pe_layout.h"
#include "uefi/efi.h"
#include "uefi/uefi_trust.h"

#define CERT_TABLE 16

/* A certificate that fills the range exactly; anything else is read as a
 * signature list. */
static int add_authorized(const uint8_t *p, size_t len, rs_trust *t, rs_error *err)
{
    const unsigned char *q = p;
    _cleanup_(rs_x509p) X509 *cert = d2i_X509(NULL, &q, (long)len);

    if (cert && q == p + len)
        return rs_trust_add_anchor(t, cert, err);
    ERR_clear_error();
    if (uefi_trust_add_esl(t, p, len, false, err) < 0)
        return rs_error_prefix(err, "vendor certificate is neither DER X.509 nor a signature list");
    return 0;
}

int vendor_cert_parse(const uint8_t *sec, size_t len, rs_trust *t, rs_error *err)
{
    uint32_t auth_size, deauth_size, auth_off, deauth_off;

    if (len < CERT_TABLE)
        return rs_fail(err, ".vendor_cert section is too short (%zu bytes)", len);
    auth_size = efi_le32(sec);
    deauth_size = efi_le32(sec + 4);
    auth_off = efi_le32(sec + 8);
    deauth_off = efi_le32(sec + 12);
    if ((uint64_t)auth_off + auth_size > len || (uint64_t)deauth_off + deauth_size > len)
        return rs_fail(err, ".vendor_cert entries (%u bytes at %u, %u bytes at %u) lie outside the section (%zu bytes)",
                       auth_size, auth_off, deauth_size, deauth_off, len);
    if (auth_size && add_authorized(sec + auth_off, auth_size, t, err) < 0)
        return -1;
    if (deauth_size && uefi_trust_add_esl(t, sec + deauth_off, deauth_size, true, err) < 0)
        return rs_error_prefix(err, "vendor dbx");
    return 0;
}

int vendor_cert_add(rs_image *img, rs_trust *t, rs_error *err)
{
    _cleanup_bytes_ rs_bytes sec = { 0 };
    int found = pe_image_section(img, ".vendor_cert", &sec, err);

    if (found <= 0)
        return found;
    return vendor_cert_parse(sec.data, sec.len, t, err) < 0 ? -1 : 1;
}

/* shim's built-in keys: the .vendor_cert section holds shim's cert_table,
 * u32 vendor_authorized_size, u32 vendor_deauthorized_size,
 * u32 vendor_authorized_offset, u32 vendor_deauthorized_offset (offsets
 * from the section start). Authorized is one DER certificate (or, in newer
 * shims, a signature list); deauthorized is a signature list, shim's
 * vendor dbx. */
#ifndef RS_UEFI_VENDOR_CERT_H
#define RS_UEFI_VENDOR_CERT_H

#include "crypto/trust.h"
#include "formats/format.h"

/* Adds the keys of a .vendor_cert section to t. */
int vendor_cert_parse(const uint8_t *sec, size_t len, rs_trust *t, rs_error *err);
/* The same for an opened image; returns 1 when it has a .vendor_cert
 * section, 0 when it has none. */
int vendor_cert_add(rs_image *img, rs_trust *t, rs_error *err);

#endif

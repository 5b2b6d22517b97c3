/* What an image to be signed would itself trust once it runs: shim's
 * built-in vendor_cert and the certificates of its vendor_db list (both
 * in its .vendor_cert section). A signature on such an image vouches for
 * everything those certificates sign, so a signing service must know
 * them (docs/security.md, "Declared trust"). */
#ifndef RS_UEFI_EMBEDDED_TRUST_H
#define RS_UEFI_EMBEDDED_TRUST_H

#include <openssl/x509.h>

#include "formats/format.h"
#include "uefi/trust_scan.h"

/* The certificates img embeds as trust anchors; an empty stack when it
 * embeds none (or is not an EFI image). A .vendor_cert that cannot be
 * read is an error: what the image trusts must be known. */
int uefi_embedded_certs(rs_image *img, STACK_OF(X509) **out, rs_error *err);

/* The same found by content (uefi/trust_scan.h): every certificate,
 * signature list and cert_table in the image's headers and sections,
 * whatever they are called. *shim_like tells whether the image looks like
 * shim itself: a section named .vendor_cert, or the names of the MOK
 * runtime mirrors only shim makes. Returns 1 when scanned; 0, s empty, for
 * an image this does not apply to: not PE, or a kernel, whose embedded
 * keys lie in its compressed payload (or, in an arm64 or RISC-V Image, are
 * its module keys), where the name rule above stays the rule. */
int uefi_embedded_scan(rs_image *img, trust_scan *s, bool *shim_like, rs_error *err);

#endif

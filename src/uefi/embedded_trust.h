/* What an image to be signed would itself trust once it runs: shim's
 * built-in vendor_cert and the certificates of its vendor_db list (both
 * in its .vendor_cert section). A signature on such an image vouches for
 * everything those certificates sign, so a signing service must know
 * them (docs/security.md, "Declared trust"). */
#ifndef RS_UEFI_EMBEDDED_TRUST_H
#define RS_UEFI_EMBEDDED_TRUST_H

#include <openssl/x509.h>

#include "formats/format.h"

/* The certificates img embeds as trust anchors; an empty stack when it
 * embeds none (or is not an EFI image). A .vendor_cert that cannot be
 * read is an error: what the image trusts must be known. */
int uefi_embedded_certs(rs_image *img, STACK_OF(X509) **out, rs_error *err);

#endif

/* RFC 7512 pkcs11: URIs. p11-kit does the parsing and matching; this adds
 * what it leaves to callers: refusing attributes it did not recognise or
 * that contradict each other, the object class a caller expects, and a
 * form of the URI that is safe to put in an error message. */
#ifndef RS_PKCS11_URI_H
#define RS_PKCS11_URI_H

#include <p11-kit/pkcs11.h>
#include <p11-kit/uri.h>
#include <stdbool.h>

#include "base/error.h"

typedef struct rs_p11_uri {
    P11KitUri *uri;
    char *display;          /* the URI as given, with a pin-value hidden */
    CK_OBJECT_CLASS class;  /* the kind of object it names */
} rs_p11_uri;

/* Parses spec. The URI's type must be `class` when present, and is set to
 * it when absent, so "pkcs11:token=t;object=o" names the key for --key and
 * the certificate for --cert. Loads p11-kit first (crypto/p11kit_lib.h),
 * which the functions taking a parsed URI then rely on. */
int rs_p11_uri_parse(const char *spec, CK_OBJECT_CLASS class, rs_p11_uri *out, rs_error *err);
void rs_p11_uri_free(rs_p11_uri *u);
/* A copy of a URI fit for messages: any pin-value hidden. Caller frees. */
char *rs_p11_uri_display(const char *spec);
#define _cleanup_p11_uri_ __attribute__((cleanup(rs_p11_uri_free)))

/* Whether a module's token in slot `slot` is the one the URI names. */
bool rs_p11_uri_match_token(const rs_p11_uri *u, const CK_INFO *module, CK_SLOT_ID slot,
                            const CK_SLOT_INFO *slot_info, const CK_TOKEN_INFO *token);
/* The object attributes the URI names (class, label, id): a template for
 * C_FindObjectsInit, owned by the URI. */
CK_ATTRIBUTE *rs_p11_uri_template(const rs_p11_uri *u, CK_ULONG *count);

/* "private key", "certificate", ... for messages. */
const char *rs_p11_class_name(CK_OBJECT_CLASS class);

#endif

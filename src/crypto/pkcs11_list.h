/* What tokens hold, for `reprosign token list`: every token with its key
 * and certificate objects, each with a pkcs11: URI that can be pasted into
 * --key or --cert. */
#ifndef RS_PKCS11_LIST_H
#define RS_PKCS11_LIST_H

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"

/* module_path NULL: p11-kit's configured modules. With login, tokens that
 * need one are logged in to (PIN as for signing) so private keys show.
 * Returns an array of tokens:
 *   { label, manufacturer, model, serial, module, initialized, login_required, uri,
 *     objects: [ { type, label, id, key_type, subject, uri } ] } */
int rs_p11_list(const char *module_path, bool login, json_t **out, rs_error *err);

#endif

/* p11-kit, loaded on first use (see base/dlib.h). Linked, it and libffi
 * cost every process their start-up (mapping, relocations, p11-kit's
 * constructors), though only pkcs11: URIs and `token list` need it: a
 * per-file sign with a PEM key never touches a token. Its headers (the
 * PKCS#11 types, CKR_* and P11_KIT_URI_* constants) are used as before;
 * its functions are called through sym_<name> after rs_p11kit_load() has
 * succeeded. */
#ifndef RS_P11KIT_LIB_H
#define RS_P11KIT_LIB_H

#include <p11-kit/p11-kit.h>
#include <p11-kit/uri.h>

#include "base/dlib.h"
#include "base/error.h"

#define RS_P11KIT_SYMBOLS(X)                                                                                  \
    X(p11_kit_be_quiet) X(p11_kit_message) X(p11_kit_module_finalize) X(p11_kit_module_get_filename)          \
    X(p11_kit_module_get_name) X(p11_kit_module_initialize) X(p11_kit_module_load) X(p11_kit_module_release)  \
    X(p11_kit_modules_finalize_and_release) X(p11_kit_modules_load_and_initialize) X(p11_kit_space_strlen)    \
    X(p11_kit_strerror) X(p11_kit_uri_any_unrecognized) X(p11_kit_uri_format) X(p11_kit_uri_free)            \
    X(p11_kit_uri_get_attribute) X(p11_kit_uri_get_attributes) X(p11_kit_uri_get_module_name)                \
    X(p11_kit_uri_get_module_path) X(p11_kit_uri_get_pin_source) X(p11_kit_uri_get_pin_value)                \
    X(p11_kit_uri_get_slot_id) X(p11_kit_uri_get_token_info) X(p11_kit_uri_match_module_info)                \
    X(p11_kit_uri_match_slot_info) X(p11_kit_uri_match_token_info) X(p11_kit_uri_message) X(p11_kit_uri_new) \
    X(p11_kit_uri_parse) X(p11_kit_uri_set_attribute) X(p11_kit_uri_set_attributes)                          \
    X(p11_kit_uri_set_module_name) X(p11_kit_uri_set_module_path)

RS_P11KIT_SYMBOLS(RS_DLIB_DECLARE)

/* Loads p11-kit once per process; safe from several threads. */
int rs_p11kit_load(rs_error *err);

#endif

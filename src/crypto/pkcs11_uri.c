#include "crypto/pkcs11_uri.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "crypto/p11kit_lib.h"

DEFINE_POINTER_CLEANUP(rs_p11kit_urip, P11KitUri, sym_p11_kit_uri_free)

static void rs_filep(FILE **f)
{
    if (*f)
        fclose(*f);
}

const char *rs_p11_class_name(CK_OBJECT_CLASS class)
{
    switch (class) {
    case CKO_PRIVATE_KEY: return "private key";
    case CKO_PUBLIC_KEY: return "public key";
    case CKO_CERTIFICATE: return "certificate";
    case CKO_SECRET_KEY: return "secret key";
    case CKO_DATA: return "data object";
    default: return "object";
    }
}

/* p11-kit only says that *some* path attribute was not recognised, so each
 * one is parsed on its own (by p11-kit still) to name the culprit. */
static bool path_attr_known(const char *attr, size_t len)
{
    _cleanup_(rs_p11kit_urip) P11KitUri *u = sym_p11_kit_uri_new();
    _cleanup_free_ char *one = NULL;

    if (!u || asprintf(&one, "pkcs11:%.*s", (int)len, attr) < 0)
        return false;
    return sym_p11_kit_uri_parse(one, P11_KIT_URI_FOR_ANY, u) == P11_KIT_URI_OK && !sym_p11_kit_uri_any_unrecognized(u);
}

/* p11-kit keeps unknown query attributes as "vendor" ones without a word;
 * a misspelt pin-source must not silently turn into a PIN prompt. */
static bool query_attr_known(const char *attr, size_t len)
{
    _cleanup_(rs_p11kit_urip) P11KitUri *u = sym_p11_kit_uri_new();
    _cleanup_free_ char *one = NULL;

    if (!u || asprintf(&one, "pkcs11:?%.*s", (int)len, attr) < 0)
        return false;
    if (sym_p11_kit_uri_parse(one, P11_KIT_URI_FOR_ANY, u) != P11_KIT_URI_OK)
        return false;
    return sym_p11_kit_uri_get_pin_value(u) || sym_p11_kit_uri_get_pin_source(u) ||
           sym_p11_kit_uri_get_module_name(u) || sym_p11_kit_uri_get_module_path(u);
}

static int check_attrs(const char *p, const char *end, char sep, bool (*known)(const char *, size_t),
                       const char *what, rs_error *err)
{
    while (p < end) {
        const char *next = memchr(p, sep, (size_t)(end - p));
        size_t len = (size_t)((next ? next : end) - p);

        if (len && !known(p, len))
            return rs_fail(err, "unknown or invalid %s attribute '%.*s'", what, (int)len, p);
        p = next ? next + 1 : end;
    }
    return 0;
}

/* Copies spec with every pin-value replaced, for messages. */
char *rs_p11_uri_display(const char *spec)
{
    _cleanup_(rs_filep) FILE *f = NULL;
    const char *query = strchr(spec, '?');
    const char *p;
    char *out = NULL;
    size_t len = 0;

    f = open_memstream(&out, &len);
    if (!f)
        return NULL;
    if (!query)
        fputs(spec, f);
    else
        fwrite(spec, 1, (size_t)(query - spec), f);
    /* p is at each '?' or '&' in turn. */
    for (p = query; p && *p;) {
        size_t seg = strcspn(p + 1, "&") + 1;

        if (!strncmp(p + 1, "pin-value=", 10))
            fprintf(f, "%cpin-value=(hidden)", *p);
        else
            fwrite(p, 1, seg, f);
        p += seg;
    }
    if (fclose(TAKE_PTR(f)) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

static int set_class(rs_p11_uri *u, CK_OBJECT_CLASS class, rs_error *err)
{
    CK_ATTRIBUTE *have = sym_p11_kit_uri_get_attribute(u->uri, CKA_CLASS);
    CK_ATTRIBUTE want = { CKA_CLASS, &class, sizeof(class) };
    CK_OBJECT_CLASS named;

    u->class = class;
    if (!have)
        return sym_p11_kit_uri_set_attribute(u->uri, &want) == P11_KIT_URI_OK ? 0 : rs_fail(err, "out of memory");
    if (have->ulValueLen != sizeof(named))
        return rs_fail(err, "%s: invalid type", u->display);
    memcpy(&named, have->pValue, sizeof(named));
    if (named != class)
        return rs_fail(err, "%s: names a %s, but a %s is needed here", u->display, rs_p11_class_name(named),
                       rs_p11_class_name(class));
    return 0;
}

int rs_p11_uri_parse(const char *spec, CK_OBJECT_CLASS class, rs_p11_uri *out, rs_error *err)
{
    const char *query = strchr(spec, '?');
    const char *path_end = query ? query : spec + strlen(spec);
    int r;

    *out = (rs_p11_uri){ 0 };
    out->display = rs_p11_uri_display(spec);
    if (!out->display)
        return rs_fail(err, "out of memory");
    /* Every other function here takes a URI parsed by this one, so
     * p11-kit is loaded for them too. */
    if (rs_p11kit_load(err) < 0)
        return rs_error_prefix(err, "%s", out->display);
    out->uri = sym_p11_kit_uri_new();
    if (!out->uri)
        return rs_fail(err, "out of memory");
    r = sym_p11_kit_uri_parse(spec, P11_KIT_URI_FOR_ANY, out->uri);
    if (r != P11_KIT_URI_OK)
        return rs_fail(err, "%s: %s", out->display, sym_p11_kit_uri_message(r));
    if (check_attrs(spec + strlen("pkcs11:"), path_end, ';', path_attr_known, "path", err) < 0 ||
        (query && check_attrs(query + 1, query + strlen(query), '&', query_attr_known, "query", err) < 0))
        return rs_error_prefix(err, "%s", out->display);
    if (sym_p11_kit_uri_any_unrecognized(out->uri))
        return rs_fail(err, "%s: unknown or invalid attribute", out->display);
    if (sym_p11_kit_uri_get_pin_value(out->uri) && sym_p11_kit_uri_get_pin_source(out->uri))
        return rs_fail(err, "%s: give pin-value or pin-source, not both", out->display);
    return set_class(out, class, err);
}

void rs_p11_uri_free(rs_p11_uri *u)
{
    if (u->uri)
        sym_p11_kit_uri_free(u->uri);
    free(u->display);
    *u = (rs_p11_uri){ 0 };
}

bool rs_p11_uri_match_token(const rs_p11_uri *u, const CK_INFO *module, CK_SLOT_ID slot,
                            const CK_SLOT_INFO *slot_info, const CK_TOKEN_INFO *token)
{
    CK_SLOT_ID want = sym_p11_kit_uri_get_slot_id(u->uri);

    if (want != (CK_SLOT_ID)-1 && want != slot)
        return false;
    return sym_p11_kit_uri_match_module_info(u->uri, module) && sym_p11_kit_uri_match_slot_info(u->uri, slot_info) &&
           sym_p11_kit_uri_match_token_info(u->uri, token);
}

CK_ATTRIBUTE *rs_p11_uri_template(const rs_p11_uri *u, CK_ULONG *count)
{
    return sym_p11_kit_uri_get_attributes(u->uri, count);
}

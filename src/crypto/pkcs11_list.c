#include "crypto/pkcs11_list.h"

#include <stdlib.h>
#include <string.h>

#include "base/json_values.h"
#include "crypto/ossl.h"
#include "crypto/p11kit_lib.h"
#include "crypto/pkcs11_token.h"

#define LIST_MAX_OBJECTS 1024

DEFINE_POINTER_CLEANUP(rs_p11kit_urip, P11KitUri, sym_p11_kit_uri_free)

typedef struct list_ctx {
    const char *module_path;
    bool login;
    json_t *tokens;
} list_ctx;

static json_t *space_string(const CK_UTF8CHAR *field, size_t n)
{
    return json_stringn((const char *)field, sym_p11_kit_space_strlen(field, n));
}

/* A URI for the token (and object, if attrs are given) that finds it
 * again through the same module. */
static char *make_uri(const list_ctx *c, const rs_p11_slot *slot, CK_ATTRIBUTE *attrs, CK_ULONG n)
{
    _cleanup_(rs_p11kit_urip) P11KitUri *u = sym_p11_kit_uri_new();
    _cleanup_free_ char *name = NULL;
    char *s = NULL;

    if (!u || sym_p11_kit_uri_set_attributes(u, attrs, n) != P11_KIT_URI_OK)
        return NULL;
    memcpy(sym_p11_kit_uri_get_token_info(u), &slot->token, sizeof(slot->token));
    if (c->module_path)
        sym_p11_kit_uri_set_module_path(u, c->module_path);
    else if ((name = sym_p11_kit_module_get_name(slot->module)))
        sym_p11_kit_uri_set_module_name(u, name);
    if (sym_p11_kit_uri_format(u, n ? P11_KIT_URI_FOR_OBJECT_ON_TOKEN : P11_KIT_URI_FOR_TOKEN, &s) != P11_KIT_URI_OK)
        return NULL;
    return s;
}

static json_t *hex_string(const rs_bytes *b)
{
    _cleanup_free_ char *hex = malloc(2 * b->len + 1);

    if (!hex)
        return NULL;
    rs_hex(b->data, b->len, hex);
    return json_string(hex);
}

static const char *key_type_name(rs_p11_token *t, CK_OBJECT_HANDLE obj)
{
    _cleanup_bytes_ rs_bytes v = { 0 };
    CK_KEY_TYPE kt = (CK_KEY_TYPE)-1;
    rs_error ignored;

    if (rs_p11_token_attr(t, obj, CKA_KEY_TYPE, &v, &ignored) == 0 && v.len == sizeof(kt))
        memcpy(&kt, v.data, sizeof(kt));
    return kt == CKK_RSA ? "RSA" : kt == CKK_EC ? "EC" : "other";
}

static json_t *cert_subject(rs_p11_token *t, CK_OBJECT_HANDLE obj)
{
    _cleanup_bytes_ rs_bytes der = { 0 };
    _cleanup_(rs_x509p) X509 *cert = NULL;
    _cleanup_free_ char *name = NULL;
    const unsigned char *p;
    rs_error ignored;

    if (rs_p11_token_attr(t, obj, CKA_VALUE, &der, &ignored) < 0 || der.len > INT32_MAX)
        return NULL;
    p = der.data;
    cert = d2i_X509(NULL, &p, (long)der.len);
    name = cert ? rs_x509_name(X509_get_subject_name(cert)) : NULL;
    return name ? json_string(name) : NULL;
}

static int class_of(rs_p11_token *t, CK_OBJECT_HANDLE obj, CK_OBJECT_CLASS *class)
{
    _cleanup_bytes_ rs_bytes v = { 0 };
    rs_error ignored;

    if (rs_p11_token_attr(t, obj, CKA_CLASS, &v, &ignored) < 0 || v.len != sizeof(*class))
        return -1;
    memcpy(class, v.data, sizeof(*class));
    return 0;
}

/* The URI spelling of a class, as the "type" attribute has it. */
static const char *uri_type(CK_OBJECT_CLASS class)
{
    return class == CKO_CERTIFICATE ? "cert" : class == CKO_PRIVATE_KEY ? "private" : "public";
}

static json_t *object_json(const list_ctx *c, rs_p11_token *t, CK_OBJECT_HANDLE obj, CK_OBJECT_CLASS class)
{
    _cleanup_bytes_ rs_bytes label = { 0 }, id = { 0 };
    _cleanup_free_ char *uri = NULL;
    CK_ATTRIBUTE attrs[3] = { { CKA_CLASS, &class, sizeof(class) } };
    CK_ULONG n = 1;
    rs_error ignored;
    json_t *o;

    if (rs_p11_token_attr(t, obj, CKA_LABEL, &label, &ignored) == 0)
        attrs[n++] = (CK_ATTRIBUTE){ CKA_LABEL, label.data, label.len };
    if (rs_p11_token_attr(t, obj, CKA_ID, &id, &ignored) == 0 && id.len)
        attrs[n++] = (CK_ATTRIBUTE){ CKA_ID, id.data, id.len };
    uri = make_uri(c, &t->slot, attrs, n);
    o = json_pack("{s:s, s:s%, s:o*, s:s*}", "type", uri_type(class), "label",
                  label.data ? (const char *)label.data : "", label.len, "id", id.len ? hex_string(&id) : NULL,
                  "uri", uri);
    if (o && class != CKO_CERTIFICATE)
        json_object_set_new(o, "key_type", json_string(key_type_name(t, obj)));
    if (o && class == CKO_CERTIFICATE)
        rs_json_set(o, "subject", cert_subject(t, obj));
    return o;
}

static int list_objects(const list_ctx *c, rs_p11_token *t, json_t *objects, rs_error *err)
{
    _cleanup_free_ CK_OBJECT_HANDLE *found = calloc(LIST_MAX_OBJECTS, sizeof(*found));
    CK_ULONG count;
    CK_OBJECT_CLASS class;

    if (!found)
        return rs_fail(err, "out of memory");
    if (rs_p11_token_search(t, NULL, 0, found, LIST_MAX_OBJECTS, &count, err) < 0)
        return -1;
    for (CK_ULONG i = 0; i < count; i++) {
        if (class_of(t, found[i], &class) < 0 ||
            (class != CKO_PRIVATE_KEY && class != CKO_PUBLIC_KEY && class != CKO_CERTIFICATE))
            continue;
        if (json_array_append_new(objects, object_json(c, t, found[i], class)) < 0)
            return rs_fail(err, "out of memory");
    }
    return 0;
}

/* Logs in as signing would, naming the token by its own URI. */
static int list_login(rs_p11_token *t, const char *token_uri, rs_error *err)
{
    _cleanup_p11_uri_ rs_p11_uri u = { 0 };

    if (rs_p11_uri_parse(token_uri, CKO_PRIVATE_KEY, &u, err) < 0)
        return -1;
    return rs_p11_token_login(t, &u, err);
}

static json_t *token_json(const rs_p11_slot *slot, const char *uri)
{
    _cleanup_free_ char *module = sym_p11_kit_module_get_filename(slot->module);
    const CK_TOKEN_INFO *ti = &slot->token;

    return json_pack("{s:s, s:o, s:o, s:o, s:s*, s:b, s:b, s:s*, s:[]}", "label", slot->label, "manufacturer",
                     space_string(ti->manufacturerID, sizeof(ti->manufacturerID)), "model",
                     space_string(ti->model, sizeof(ti->model)), "serial",
                     space_string(ti->serialNumber, sizeof(ti->serialNumber)), "module", module, "initialized",
                     (ti->flags & CKF_TOKEN_INITIALIZED) != 0, "login_required",
                     (ti->flags & CKF_LOGIN_REQUIRED) != 0, "uri", uri, "objects");
}

static int list_token(const rs_p11_slot *slot, void *ctx, rs_error *err)
{
    list_ctx *c = ctx;
    _cleanup_p11_token_ rs_p11_token t = { 0 };
    _cleanup_free_ char *uri = make_uri(c, slot, NULL, 0);
    _cleanup_(rs_jsonp) json_t *tok = token_json(slot, uri);

    if (!uri || !tok)
        return rs_fail(err, "out of memory");
    if (slot->token.flags & CKF_TOKEN_INITIALIZED) {
        if (rs_p11_token_open_slot(slot, &t, err) < 0 || (c->login && list_login(&t, uri, err) < 0) ||
            list_objects(c, &t, json_object_get(tok, "objects"), err) < 0)
            return -1;
    }
    if (json_array_append(c->tokens, tok) < 0)
        return rs_fail(err, "out of memory");
    return 0;
}

int rs_p11_list(const char *module_path, bool login, json_t **out, rs_error *err)
{
    rs_p11_modules m;
    list_ctx c = { .module_path = module_path, .login = login, .tokens = json_array() };
    int r;

    if (!c.tokens)
        return rs_fail(err, "out of memory");
    if (rs_p11_modules_load(module_path, NULL, &m, err) < 0) {
        json_decref(c.tokens);
        rs_p11_modules_release(&m);
        return -1;
    }
    r = rs_p11_each_token(&m, list_token, &c, err);
    rs_p11_modules_release(&m);
    if (r < 0) {
        json_decref(c.tokens);
        return -1;
    }
    *out = c.tokens;
    return 0;
}

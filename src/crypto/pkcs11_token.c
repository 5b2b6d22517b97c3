#include "crypto/pkcs11_token.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "crypto/p11kit_lib.h"
#include "crypto/pkcs11_pin.h"

#define MAX_SLOTS 64
#define INVENTORY_MAX 12

static void rs_filep(FILE **f)
{
    if (*f)
        fclose(*f);
}

static bool streq_null(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static void space_trim(const CK_UTF8CHAR *field, size_t n, char *out)
{
    size_t len = sym_p11_kit_space_strlen(field, n);

    memcpy(out, field, len);
    out[len] = '\0';
}

int rs_p11_modules_load(const char *path, const char *name, rs_p11_modules *m, rs_error *err)
{
    CK_RV rv;

    *m = (rs_p11_modules){ 0 };
    /* `token list` comes here without a URI parsed first. */
    if (rs_p11kit_load(err) < 0)
        return -1;
    /* p11-kit would otherwise print its own messages on stderr; the
     * library reports through rs_error only. */
    sym_p11_kit_be_quiet();
    if ((path && !(m->path = strdup(path))) || (name && !(m->name = strdup(name))))
        return rs_fail(err, "out of memory");
    if (!path) {
        m->configured = sym_p11_kit_modules_load_and_initialize(0);
        if (!m->configured)
            return rs_fail(err, "cannot load the configured PKCS#11 modules: %s", sym_p11_kit_message());
        return 0;
    }
    m->by_path[0] = sym_p11_kit_module_load(path, 0);
    if (!m->by_path[0])
        return rs_fail(err, "%s: cannot load PKCS#11 module: %s", path, sym_p11_kit_message());
    rv = sym_p11_kit_module_initialize(m->by_path[0]);
    if (rv != CKR_OK) {
        sym_p11_kit_module_release(m->by_path[0]);
        m->by_path[0] = NULL;
        return rs_fail(err, "%s: cannot initialise PKCS#11 module: %s", path, sym_p11_kit_strerror(rv));
    }
    return 0;
}

void rs_p11_modules_release(rs_p11_modules *m)
{
    if (m->configured)
        sym_p11_kit_modules_finalize_and_release(m->configured);
    if (m->by_path[0]) {
        sym_p11_kit_module_finalize(m->by_path[0]);
        sym_p11_kit_module_release(m->by_path[0]);
    }
    free(m->path);
    free(m->name);
    *m = (rs_p11_modules){ 0 };
}

static bool module_selected(const rs_p11_modules *m, CK_FUNCTION_LIST *module)
{
    _cleanup_free_ char *name = NULL;

    if (m->path || !m->name)
        return true;
    name = sym_p11_kit_module_get_name(module);
    return streq_null(name, m->name);
}

static int each_slot(CK_FUNCTION_LIST *module, rs_p11_slot_fn fn, void *ctx, rs_error *err)
{
    CK_SLOT_ID ids[MAX_SLOTS];
    CK_ULONG n = MAX_SLOTS;
    rs_p11_slot slot = { .module = module };
    CK_RV rv;

    rv = module->C_GetInfo(&slot.module_info);
    if (rv == CKR_OK)
        rv = module->C_GetSlotList(CK_TRUE, ids, &n);
    if (rv != CKR_OK)
        return rs_fail(err, "cannot list a PKCS#11 module's slots: %s", sym_p11_kit_strerror(rv));
    for (CK_ULONG i = 0; i < n; i++) {
        slot.id = ids[i];
        /* A token pulled out between the two calls is simply not there. */
        if (module->C_GetSlotInfo(slot.id, &slot.info) != CKR_OK ||
            module->C_GetTokenInfo(slot.id, &slot.token) != CKR_OK)
            continue;
        space_trim(slot.token.label, sizeof(slot.token.label), slot.label);
        if (fn(&slot, ctx, err) < 0)
            return -1;
    }
    return 0;
}

int rs_p11_each_token(rs_p11_modules *m, rs_p11_slot_fn fn, void *ctx, rs_error *err)
{
    CK_FUNCTION_LIST **all = m->configured ? m->configured : m->by_path;

    for (size_t i = 0; all[i]; i++)
        if (module_selected(m, all[i]) && each_slot(all[i], fn, ctx, err) < 0)
            return -1;
    return 0;
}

typedef struct token_search {
    const rs_p11_uri *uri;
    rs_p11_slot found;
    int matches;
    FILE *seen;     /* labels of every token, for the error message */
    FILE *matched;  /* labels of the matching ones */
} token_search;

static int consider_token(const rs_p11_slot *slot, void *ctx, rs_error *err)
{
    token_search *s = ctx;

    /* A free slot (SoftHSM keeps one) holds no keys to look for. */
    if (!(slot->token.flags & CKF_TOKEN_INITIALIZED))
        return 0;
    fprintf(s->seen, "%s'%s'", ftell(s->seen) ? ", " : "", slot->label);
    if (!rs_p11_uri_match_token(s->uri, &slot->module_info, slot->id, &slot->info, &slot->token))
        return 0;
    fprintf(s->matched, "%s'%s'", ftell(s->matched) ? ", " : "", slot->label);
    if (s->matches++ == 0)
        s->found = *slot;
    return 0;
}

static int search_result(token_search *s, const char *seen, const char *matched, rs_error *err)
{
    if (s->matches == 1)
        return 0;
    if (s->matches > 1)
        return rs_fail(err, "%s: %d tokens match (%s); name one with token= or serial=", s->uri->display,
                       s->matches, matched);
    if (!*seen)
        return rs_fail(err, "%s: no token matches (no tokens are present)", s->uri->display);
    return rs_fail(err, "%s: no token matches (tokens present: %s)", s->uri->display, seen);
}

static int find_token(rs_p11_modules *m, const rs_p11_uri *u, rs_p11_slot *out, rs_error *err)
{
    _cleanup_free_ char *seen = NULL, *matched = NULL;
    size_t seen_len = 0, matched_len = 0;
    token_search s = { .uri = u };
    int r;

    s.seen = open_memstream(&seen, &seen_len);
    s.matched = open_memstream(&matched, &matched_len);
    if (!s.seen || !s.matched) {
        rs_filep(&s.seen);
        rs_filep(&s.matched);
        return rs_fail(err, "out of memory");
    }
    r = rs_p11_each_token(m, consider_token, &s, err);
    fclose(s.seen);
    fclose(s.matched);
    if (r < 0)
        return rs_error_prefix(err, "%s", u->display);
    if (search_result(&s, seen, matched, err) < 0)
        return -1;
    *out = s.found;
    return 0;
}

int rs_p11_token_open_slot(const rs_p11_slot *slot, rs_p11_token *t, rs_error *err)
{
    CK_RV rv;

    t->slot = *slot;
    rv = slot->module->C_OpenSession(slot->id, CKF_SERIAL_SESSION, NULL, NULL, &t->session);
    if (rv != CKR_OK)
        return rs_fail(err, "token '%s': cannot open a session: %s", slot->label, sym_p11_kit_strerror(rv));
    t->open = true;
    return 0;
}

int rs_p11_token_open(const rs_p11_uri *u, rs_p11_token *t, rs_error *err)
{
    *t = (rs_p11_token){ 0 };
    if (rs_p11_modules_load(sym_p11_kit_uri_get_module_path(u->uri), sym_p11_kit_uri_get_module_name(u->uri),
                            &t->modules, err) < 0)
        return rs_error_prefix(err, "%s", u->display);
    if (find_token(&t->modules, u, &t->slot, err) < 0)
        return -1;
    if (rs_p11_token_open_slot(&t->slot, t, err) < 0)
        return rs_error_prefix(err, "%s", u->display);
    return 0;
}

void rs_p11_token_close(rs_p11_token *t)
{
    if (t->open)
        t->slot.module->C_CloseSession(t->session);
    t->open = false;
    rs_p11_modules_release(&t->modules);
}

bool rs_p11_token_logged_in(rs_p11_token *t)
{
    CK_SESSION_INFO info;

    if (t->slot.module->C_GetSessionInfo(t->session, &info) != CKR_OK)
        return false;
    return info.state == CKS_RO_USER_FUNCTIONS || info.state == CKS_RW_USER_FUNCTIONS;
}

static int login_result(const rs_p11_token *t, const rs_p11_uri *u, CK_RV rv, rs_error *err)
{
    switch (rv) {
    case CKR_OK:
    case CKR_USER_ALREADY_LOGGED_IN:
        return 0;
    case CKR_PIN_INCORRECT:
        return rs_fail(err, "%s: PIN incorrect", u->display);
    case CKR_PIN_LOCKED:
        return rs_fail(err, "%s: the PIN of token '%s' is locked", u->display, t->slot.label);
    case CKR_PIN_EXPIRED:
        return rs_fail(err, "%s: the PIN of token '%s' has expired", u->display, t->slot.label);
    default:
        return rs_fail(err, "%s: cannot log in to token '%s': %s", u->display, t->slot.label, sym_p11_kit_strerror(rv));
    }
}

/* A PIN pad does its own asking, unless a PIN was given anyway. */
static bool pin_pad(const rs_p11_token *t, const rs_p11_uri *u)
{
    return (t->slot.token.flags & CKF_PROTECTED_AUTHENTICATION_PATH) && !sym_p11_kit_uri_get_pin_value(u->uri) &&
           !sym_p11_kit_uri_get_pin_source(u->uri) && !getenv(RS_P11_PIN_ENV);
}

int rs_p11_token_login(rs_p11_token *t, const rs_p11_uri *u, rs_error *err)
{
    _cleanup_pin_ rs_p11_pin pin = { 0 };
    CK_RV rv;

    if (!(t->slot.token.flags & CKF_LOGIN_REQUIRED) || rs_p11_token_logged_in(t))
        return 0;
    if (pin_pad(t, u))
        return login_result(t, u, t->slot.module->C_Login(t->session, CKU_USER, NULL, 0), err);
    if (rs_p11_pin_get(u->uri, t->slot.label, &pin, err) < 0)
        return rs_error_prefix(err, "%s", u->display);
    rv = t->slot.module->C_Login(t->session, CKU_USER, (CK_UTF8CHAR *)pin.value, pin.len);
    return login_result(t, u, rv, err);
}

int rs_p11_token_attr(rs_p11_token *t, CK_OBJECT_HANDLE obj, CK_ATTRIBUTE_TYPE type, rs_bytes *out, rs_error *err)
{
    CK_ATTRIBUTE a = { type, NULL, 0 };
    uint8_t *buf;
    CK_RV rv;

    rv = t->slot.module->C_GetAttributeValue(t->session, obj, &a, 1);
    if (rv != CKR_OK || a.ulValueLen == CK_UNAVAILABLE_INFORMATION)
        return rs_fail(err, "token '%s': cannot read attribute 0x%lx: %s", t->slot.label, (unsigned long)type,
                       sym_p11_kit_strerror(rv));
    buf = malloc(a.ulValueLen ? a.ulValueLen : 1);
    if (!buf)
        return rs_fail(err, "out of memory");
    a.pValue = buf;
    rv = t->slot.module->C_GetAttributeValue(t->session, obj, &a, 1);
    if (rv != CKR_OK) {
        free(buf);
        return rs_fail(err, "token '%s': cannot read attribute 0x%lx: %s", t->slot.label, (unsigned long)type,
                       sym_p11_kit_strerror(rv));
    }
    rs_bytes_adopt(out, buf, a.ulValueLen);
    return 0;
}

int rs_p11_token_search(rs_p11_token *t, CK_ATTRIBUTE *tmpl, CK_ULONG n, CK_OBJECT_HANDLE *found, CK_ULONG max,
                        CK_ULONG *count, rs_error *err)
{
    CK_FUNCTION_LIST *f = t->slot.module;
    CK_RV rv;

    *count = 0;
    rv = f->C_FindObjectsInit(t->session, tmpl, n);
    if (rv != CKR_OK)
        return rs_fail(err, "token '%s': cannot search objects: %s", t->slot.label, sym_p11_kit_strerror(rv));
    rv = f->C_FindObjects(t->session, found, max, count);
    f->C_FindObjectsFinal(t->session);
    if (rv != CKR_OK)
        return rs_fail(err, "token '%s': cannot search objects: %s", t->slot.label, sym_p11_kit_strerror(rv));
    return 0;
}

static void describe_object(rs_p11_token *t, CK_OBJECT_HANDLE obj, FILE *f)
{
    _cleanup_bytes_ rs_bytes class = { 0 }, label = { 0 }, id = { 0 };
    CK_OBJECT_CLASS c = (CK_OBJECT_CLASS)-1;
    rs_error ignored;

    if (rs_p11_token_attr(t, obj, CKA_CLASS, &class, &ignored) == 0 && class.len == sizeof(c))
        memcpy(&c, class.data, sizeof(c));
    fprintf(f, "%s%s", ftell(f) ? ", " : "", rs_p11_class_name(c));
    if (rs_p11_token_attr(t, obj, CKA_LABEL, &label, &ignored) == 0 && label.len)
        fprintf(f, " '%.*s'", (int)label.len, (const char *)label.data);
    if (rs_p11_token_attr(t, obj, CKA_ID, &id, &ignored) == 0 && id.len) {
        fputs(" id=", f);
        for (size_t i = 0; i < id.len; i++)
            fprintf(f, "%%%02x", id.data[i]);
    }
}

/* What the token does hold, so a "not found" names the alternatives. */
static char *inventory(rs_p11_token *t)
{
    CK_OBJECT_HANDLE objs[INVENTORY_MAX + 1];
    _cleanup_(rs_filep) FILE *f = NULL;
    char *out = NULL;
    size_t len = 0;
    CK_ULONG n = 0;
    rs_error ignored;

    f = open_memstream(&out, &len);
    if (!f)
        return NULL;
    if (rs_p11_token_search(t, NULL, 0, objs, INVENTORY_MAX + 1, &n, &ignored) < 0 || n == 0)
        fputs("no objects it will show", f);
    for (CK_ULONG i = 0; i < n && i < INVENTORY_MAX; i++)
        describe_object(t, objs[i], f);
    if (n > INVENTORY_MAX)
        fputs(", ...", f);
    if (!rs_p11_token_logged_in(t) && (t->slot.token.flags & CKF_LOGIN_REQUIRED))
        fputs("; private objects show only after login", f);
    fclose(TAKE_PTR(f));
    return out;
}

int rs_p11_token_find(rs_p11_token *t, const rs_p11_uri *u, CK_OBJECT_HANDLE *obj, rs_error *err)
{
    CK_OBJECT_HANDLE found[2];
    _cleanup_free_ char *has = NULL;
    CK_ATTRIBUTE *tmpl;
    CK_ULONG n, count;

    tmpl = rs_p11_uri_template(u, &n);
    if (rs_p11_token_search(t, tmpl, n, found, 2, &count, err) < 0)
        return rs_error_prefix(err, "%s", u->display);
    if (count == 1) {
        *obj = found[0];
        return 0;
    }
    if (count > 1)
        return rs_fail(err, "%s: more than one %s matches on token '%s'; name one with id= or object=",
                       u->display, rs_p11_class_name(u->class), t->slot.label);
    has = inventory(t);
    return rs_fail(err, "%s: no %s matches (token '%s' has: %s)", u->display, rs_p11_class_name(u->class),
                   t->slot.label, has ? has : "?");
}

bool rs_p11_token_is(const rs_p11_token *t, const rs_p11_uri *u)
{
    const char *path = sym_p11_kit_uri_get_module_path(u->uri);

    if (!streq_null(path, t->modules.path) || (!path && !streq_null(sym_p11_kit_uri_get_module_name(u->uri),
                                                                       t->modules.name)))
        return false;
    return rs_p11_uri_match_token(u, &t->slot.module_info, t->slot.id, &t->slot.info, &t->slot.token);
}

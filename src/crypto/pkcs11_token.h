/* Finding a token through p11-kit and talking to it: one session, one
 * login, objects looked up by URI. Shared by the signer backend and by
 * `reprosign token list`. */
#ifndef RS_PKCS11_TOKEN_H
#define RS_PKCS11_TOKEN_H

#include <p11-kit/p11-kit.h>
#include <p11-kit/pkcs11.h>
#include <stdbool.h>

#include "base/bytes.h"
#include "base/error.h"
#include "crypto/pkcs11_uri.h"

/* The modules to search: one loaded by path, or all of p11-kit's
 * configured ones. */
typedef struct rs_p11_modules {
    CK_FUNCTION_LIST **configured;
    CK_FUNCTION_LIST *by_path[2];  /* NULL-terminated, like `configured` */
    char *path;                    /* as given, for comparing URIs */
    char *name;                    /* only the configured module of this name */
} rs_p11_modules;

/* path wins over name (RFC 7512); both NULL means every configured module.
 * Loads p11-kit first, as rs_p11_uri_parse does. */
int rs_p11_modules_load(const char *path, const char *name, rs_p11_modules *m, rs_error *err);
void rs_p11_modules_release(rs_p11_modules *m);

/* One slot with a token in it, as seen while searching. */
typedef struct rs_p11_slot {
    CK_FUNCTION_LIST *module;
    CK_INFO module_info;
    CK_SLOT_ID id;
    CK_SLOT_INFO info;
    CK_TOKEN_INFO token;
    char label[sizeof(((CK_TOKEN_INFO *)0)->label) + 1];  /* without padding */
} rs_p11_slot;

typedef int (*rs_p11_slot_fn)(const rs_p11_slot *slot, void *ctx, rs_error *err);
/* Calls fn for every present token of the selected modules. */
int rs_p11_each_token(rs_p11_modules *m, rs_p11_slot_fn fn, void *ctx, rs_error *err);

typedef struct rs_p11_token {
    rs_p11_modules modules;
    rs_p11_slot slot;
    CK_SESSION_HANDLE session;
    bool open;
} rs_p11_token;

/* Finds the one token the URI names (loading its modules) and opens a
 * read-only session on it. */
int rs_p11_token_open(const rs_p11_uri *u, rs_p11_token *t, rs_error *err);
/* Opens a session on a slot found by rs_p11_each_token; t does not own
 * the modules then. */
int rs_p11_token_open_slot(const rs_p11_slot *slot, rs_p11_token *t, rs_error *err);
/* Logs the user in unless the token needs no login or already has one.
 * Never retries: a wrong PIN is reported, not tried again. */
int rs_p11_token_login(rs_p11_token *t, const rs_p11_uri *u, rs_error *err);
/* Finds the one object of the URI's class matching its id/label. */
int rs_p11_token_find(rs_p11_token *t, const rs_p11_uri *u, CK_OBJECT_HANDLE *obj, rs_error *err);
/* Collects up to max handles of objects matching tmpl (NULL: all). */
int rs_p11_token_search(rs_p11_token *t, CK_ATTRIBUTE *tmpl, CK_ULONG n, CK_OBJECT_HANDLE *found, CK_ULONG max,
                        CK_ULONG *count, rs_error *err);
/* Reads one attribute's value. */
int rs_p11_token_attr(rs_p11_token *t, CK_OBJECT_HANDLE obj, CK_ATTRIBUTE_TYPE type, rs_bytes *out, rs_error *err);
bool rs_p11_token_logged_in(rs_p11_token *t);
void rs_p11_token_close(rs_p11_token *t);
#define _cleanup_p11_token_ __attribute__((cleanup(rs_p11_token_close)))

/* Whether t's token is the one the URI names, reached through the same module. */
bool rs_p11_token_is(const rs_p11_token *t, const rs_p11_uri *u);

#endif

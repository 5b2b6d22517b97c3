/* Sessions on one logged-in token, shared by the threads that sign with it.
 * A PKCS#11 session runs one operation at a time, so each signing thread
 * borrows a session of its own. The login is the token's (PKCS#11 logs in
 * every session of an application at once) and object handles are valid
 * in all of them, so a key found once signs in any session.
 *
 * Sessions are opened only when a thread finds none idle: the pool grows
 * to the number of threads that sign at once (sign-template's --jobs), and
 * no further than the token allows. A token that allows one session gets
 * one, taken in turns. */
#ifndef RS_PKCS11_POOL_H
#define RS_PKCS11_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/bytes.h"
#include "crypto/pkcs11_token.h"

/* Beyond this many signatures at once a token is the bottleneck whatever
 * the sessions; more threads then wait their turn for one. */
#define RS_P11_POOL_MAX 64

typedef struct rs_p11_pool {
    CK_FUNCTION_LIST *module;
    CK_SLOT_ID slot;
    CK_SESSION_HANDLE login;  /* the token's own session: lent, never closed here */
    pthread_mutex_t lock;
    pthread_cond_t returned;
    CK_SESSION_HANDLE idle[RS_P11_POOL_MAX];
    size_t n_idle;
    size_t n_open;  /* idle, lent out, or being opened */
    size_t cap;
} rs_p11_pool;

/* How many sessions to keep at most, from CK_TOKEN_INFO's
 * ulMaxSessionCount: its count (at least 1) up to RS_P11_POOL_MAX; no limit
 * given (CK_EFFECTIVELY_INFINITE) or none known (CK_UNAVAILABLE_INFORMATION)
 * means RS_P11_POOL_MAX. A token that then refuses a session sets the
 * limit at the sessions the pool has. */
size_t rs_p11_pool_cap(CK_ULONG max_session_count);

/* A pool starting with t's session (logged in already), of at most cap
 * sessions. t must outlive the pool. */
void rs_p11_pool_init(rs_p11_pool *p, const rs_p11_token *t, size_t cap);
/* Closes the sessions the pool opened; every borrowed one must be back. */
void rs_p11_pool_destroy(rs_p11_pool *p);

/* Borrows an idle session, opens one if the pool may grow, or waits for
 * one to come back. Returns the token's error only when a session cannot
 * be opened and the pool has none to wait for. */
CK_RV rs_p11_pool_take(rs_p11_pool *p, CK_SESSION_HANDLE *s);
/* Returns a session; a broken one (the token closed it) is dropped. */
void rs_p11_pool_give(rs_p11_pool *p, CK_SESSION_HANDLE s, bool broken);

/* C_SignInit + C_Sign of `in` with key under mechanism, on a borrowed
 * session. */
CK_RV rs_p11_pool_sign(rs_p11_pool *p, CK_MECHANISM_TYPE mechanism, CK_OBJECT_HANDLE key, const rs_bytes *in,
                       uint8_t *out, CK_ULONG *outlen);

/* Sessions open now (idle or lent out). */
size_t rs_p11_pool_sessions(rs_p11_pool *p);

#endif

#include "crypto/pkcs11_pool.h"

size_t rs_p11_pool_cap(CK_ULONG max_session_count)
{
    if (max_session_count == CK_EFFECTIVELY_INFINITE || max_session_count == CK_UNAVAILABLE_INFORMATION ||
        max_session_count > RS_P11_POOL_MAX)
        return RS_P11_POOL_MAX;
    return (size_t)max_session_count;
}

void rs_p11_pool_init(rs_p11_pool *p, const rs_p11_token *t, size_t cap)
{
    *p = (rs_p11_pool){ .module = t->slot.module, .slot = t->slot.id, .login = t->session };
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->returned, NULL);
    p->idle[0] = t->session;
    p->n_idle = p->n_open = 1;
    p->cap = cap < 1 ? 1 : cap > RS_P11_POOL_MAX ? RS_P11_POOL_MAX : cap;
}

void rs_p11_pool_destroy(rs_p11_pool *p)
{
    for (size_t i = 0; i < p->n_idle; i++)
        if (p->idle[i] != p->login)
            p->module->C_CloseSession(p->idle[i]);
    p->n_idle = p->n_open = 0;
    pthread_cond_destroy(&p->returned);
    pthread_mutex_destroy(&p->lock);
}

/* Opens one more session, outside the lock so that the others sign
 * meanwhile. Called with the lock held and a place reserved in n_open. */
static CK_RV open_one(rs_p11_pool *p, CK_SESSION_HANDLE *s)
{
    CK_RV rv;

    pthread_mutex_unlock(&p->lock);
    rv = p->module->C_OpenSession(p->slot, CKF_SERIAL_SESSION, NULL, NULL, s);
    pthread_mutex_lock(&p->lock);
    if (rv == CKR_OK)
        return CKR_OK;
    p->n_open--;
    /* A limit the token did not announce (CKR_SESSION_COUNT: sessions of
     * other processes count too), or no memory for one more: the sessions
     * the pool has are the ones it keeps. */
    if (p->n_open > 0)
        p->cap = p->n_open;
    /* A thread that waited for this session tries for itself. */
    pthread_cond_broadcast(&p->returned);
    return rv;
}

CK_RV rs_p11_pool_take(rs_p11_pool *p, CK_SESSION_HANDLE *s)
{
    CK_RV rv = CKR_OK;

    pthread_mutex_lock(&p->lock);
    for (;;) {
        if (p->n_idle > 0) {
            *s = p->idle[--p->n_idle];
            rv = CKR_OK;
            break;
        }
        if (p->n_open < p->cap) {
            p->n_open++;
            rv = open_one(p, s);
            /* Refused: wait for one of ours, if there is one. */
            if (rv == CKR_OK || p->n_open == 0)
                break;
            continue;
        }
        pthread_cond_wait(&p->returned, &p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return rv;
}

void rs_p11_pool_give(rs_p11_pool *p, CK_SESSION_HANDLE s, bool broken)
{
    if (broken && s != p->login)
        p->module->C_CloseSession(s);
    pthread_mutex_lock(&p->lock);
    if (broken)
        p->n_open--;
    else
        p->idle[p->n_idle++] = s;
    /* A dropped session leaves room for a new one: a waiter may open it. */
    pthread_cond_signal(&p->returned);
    pthread_mutex_unlock(&p->lock);
}

/* The session is gone, not merely the operation failed. */
static bool session_lost(CK_RV rv)
{
    return rv == CKR_SESSION_HANDLE_INVALID || rv == CKR_SESSION_CLOSED || rv == CKR_DEVICE_REMOVED ||
           rv == CKR_TOKEN_NOT_PRESENT;
}

CK_RV rs_p11_pool_sign(rs_p11_pool *p, CK_MECHANISM_TYPE mechanism, CK_OBJECT_HANDLE key, const rs_bytes *in,
                       uint8_t *out, CK_ULONG *outlen)
{
    CK_MECHANISM mech = { mechanism, NULL, 0 };
    CK_SESSION_HANDLE s;
    CK_RV rv;

    rv = rs_p11_pool_take(p, &s);
    if (rv != CKR_OK)
        return rv;
    rv = p->module->C_SignInit(s, &mech, key);
    if (rv == CKR_OK)
        rv = p->module->C_Sign(s, in->data, in->len, out, outlen);
    rs_p11_pool_give(p, s, session_lost(rv));
    return rv;
}

size_t rs_p11_pool_sessions(rs_p11_pool *p)
{
    size_t n;

    pthread_mutex_lock(&p->lock);
    n = p->n_open;
    pthread_mutex_unlock(&p->lock);
    return n;
}

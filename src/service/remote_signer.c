#include "service/remote_signer.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "ops/offline.h"
#include "service/proto.h"

typedef struct remote_signer {
    rs_image_signer base;
    char *socket;
    STACK_OF(X509) *chain;
    pthread_mutex_t mu;
    rs_client **idle;            /* open connections no thread is using */
    size_t n_idle, cap;
} remote_signer;

static void client_free(rs_client *c)
{
    if (c) {
        rs_client_close(c);
        free(c);
    }
}

static rs_client *connect_new(remote_signer *r, rs_error *err)
{
    rs_client *c = malloc(sizeof(*c));

    if (!c) {
        rs_fail(err, "out of memory");
        return NULL;
    }
    if (rs_client_open(r->socket, c, err) < 0) {
        free(c);
        rs_error_prefix(err, "%s", r->socket);
        return NULL;
    }
    return c;
}

/* An open connection if one is idle (*reused), else a new one. */
static rs_client *take(remote_signer *r, bool *reused, rs_error *err)
{
    rs_client *c = NULL;

    pthread_mutex_lock(&r->mu);
    if (r->n_idle)
        c = r->idle[--r->n_idle];
    pthread_mutex_unlock(&r->mu);
    *reused = c != NULL;
    return c ? c : connect_new(r, err);
}

static void give_back(remote_signer *r, rs_client *c)
{
    rs_client **grown;

    pthread_mutex_lock(&r->mu);
    if (r->n_idle == r->cap && (grown = realloc(r->idle, (r->cap * 2 + 4) * sizeof(*grown)))) {
        r->idle = grown;
        r->cap = r->cap * 2 + 4;
    }
    if (r->n_idle < r->cap) {
        r->idle[r->n_idle++] = c;
        c = NULL;
    }
    pthread_mutex_unlock(&r->mu);
    client_free(c);
}

/* A connection that waited in the pool may have been closed meanwhile (the
 * service drops idle ones, or restarted): the request then goes once more
 * on a new one. A refusal is an answer, and is not asked again. */
static int exchange(remote_signer *r, const rs_offline_request *req, int image_fd, rs_bytes *value, rs_error *err)
{
    bool reused;
    rs_client *c = take(r, &reused, err);
    int rc;

    if (!c)
        return -1;
    rc = rs_client_sign_image(c, req, image_fd, value, NULL, err);
    if (rc < 0 && c->broken && reused) {
        client_free(c);
        if (!(c = connect_new(r, err)))
            return -1;
        rc = rs_client_sign_image(c, req, image_fd, value, NULL, err);
    }
    if (rc < 0) {
        client_free(c);   /* what it still holds is not worth sorting out */
        return rs_error_prefix(err, "%s", r->socket);
    }
    give_back(r, c);
    return 0;
}

/* The container is built here around the one value the service signs;
 * the service rebuilds the request itself before it signs anything. */
static int remote_sign(rs_image_signer *s, const rs_format *f, const rs_digest *d, const rs_sign_options *o,
                       const char *name, int image_fd, rs_bytes *der, rs_error *err)
{
    remote_signer *r = (remote_signer *)s;
    _cleanup_(rs_offline_request_free) rs_offline_request req = { 0 };
    _cleanup_bytes_ rs_bytes value = { 0 };

    if (rs_offline_prepare_digest(f, d, s->cert, r->chain, o, &req, err) < 0)
        return -1;
    if (name && !(req.file = strdup(name)))
        return rs_fail(err, "out of memory");
    if (exchange(r, &req, image_fd, &value, err) < 0)
        return -1;
    return rs_offline_finish(&req, &value, der, err);
}

static void remote_destroy(rs_image_signer *s)
{
    remote_signer *r = (remote_signer *)s;

    for (size_t i = 0; i < r->n_idle; i++)
        client_free(r->idle[i]);
    free(r->idle);
    free(r->socket);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

static const rs_image_signer_ops remote_ops = {
    .sign = remote_sign,
    .destroy = remote_destroy,
};

int rs_image_signer_remote(const char *socket, X509 *cert, STACK_OF(X509) *chain, rs_image_signer **out,
                           rs_error *err)
{
    _cleanup_(rs_image_signerp) rs_image_signer *s = NULL;
    remote_signer *r = calloc(1, sizeof(*r));
    rs_client *first;

    *out = NULL;
    if (!r)
        return rs_fail(err, "out of memory");
    pthread_mutex_init(&r->mu, NULL);
    r->base.ops = &remote_ops;
    r->base.cert = cert;
    r->base.wants_image = true;
    r->chain = chain;
    s = &r->base;
    if (!(r->socket = strdup(socket)))
        return rs_fail(err, "out of memory");
    if (!(first = connect_new(r, err)))
        return -1;
    give_back(r, first);
    *out = TAKE_PTR(s);
    return 0;
}

#include "service/server.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "service/proto.h"
#include "service/server_internal.h"

/* Connections one uid may hold: `sign-template --via` opens up to 64,
 * one per worker; twice that leaves room for a second build, and one
 * hostile uid cannot take every slot. */
#define MAX_CLIENTS_PER_UID 128
/* A client that does not read its answers does not hold a thread. */
#define SEND_TIMEOUT_S 10
#define RS_STRINGIFY_(x) #x
#define RS_STRINGIFY(x) RS_STRINGIFY_(x)

#define note(s, ...) rs_notef((s)->o.note, (s)->o.note_ctx, NULL, __VA_ARGS__)

static bool allowed(const rs_service_config *c, const struct ucred *cred)
{
    for (size_t i = 0; i < c->n_uids; i++)
        if (c->uids[i] == cred->uid)
            return true;
    for (size_t i = 0; i < c->n_gids; i++)
        if (c->gids[i] == cred->gid)
            return true;
    return false;
}

static void forget(rs_server *s, int fd)
{
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < MAX_CLIENTS; i++)
        if (s->fds[i] == fd) {
            s->fds[i] = -1;
            s->held[i] = 0;
        }
    close(fd);
    s->active--;
    pthread_cond_broadcast(&s->idle);
    pthread_mutex_unlock(&s->mu);
}

static void *client_thread(void *arg)
{
    client *c = arg;

    server_serve_client(c);
    forget(c->server, c->fd);
    free(c);
    return NULL;
}

int server_charge(void *ctx, size_t cap, rs_error *err)
{
    client *c = ctx;
    rs_server *s = c->server;
    size_t others = 0;
    bool fits;

    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < MAX_CLIENTS; i++)
        if (i != c->slot && s->fds[i] >= 0 && s->uids[i] == c->cred.uid)
            others += s->held[i];
    fits = cap <= s->held[c->slot] || others + cap <= MAX_BUFFERED_PER_UID;
    if (fits)
        s->held[c->slot] = cap;
    pthread_mutex_unlock(&s->mu);
    if (!fits)
        return rs_fail(err, "this uid's connections hold %zu bytes of requests, and this one needs %zu more "
                            "(the limit is %d a uid)", others, cap, MAX_BUFFERED_PER_UID);
    return 0;
}

/* NULL when the connection has a slot (*slot), else why not. */
static const char *track(rs_server *s, int fd, uid_t uid, size_t *slot)
{
    const char *why = "the service is busy or stopping; try again";
    size_t mine = 0, free_slot = MAX_CLIENTS;

    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < MAX_CLIENTS; i++) {
        if (s->fds[i] < 0 && free_slot == MAX_CLIENTS)
            free_slot = i;
        mine += s->fds[i] >= 0 && s->uids[i] == uid;
    }
    if (mine >= MAX_CLIENTS_PER_UID)
        why = "this uid already holds the most connections one uid may (" RS_STRINGIFY(MAX_CLIENTS_PER_UID) ")";
    else if (!s->stopping && free_slot < MAX_CLIENTS) {
        s->fds[free_slot] = fd;
        s->uids[free_slot] = uid;
        s->held[free_slot] = 0;
        *slot = free_slot;
        s->active++;
        why = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    return why;
}

static void refuse(rs_server *s, int fd, const char *why)
{
    rs_error err;

    server_answer(fd, rs_answer_refused(why), &err);
    close(fd);
}

static void peer_exe(client *c)
{
    char link[64], exe[256];
    ssize_t n;

    snprintf(link, sizeof(link), "/proc/%d/exe", (int)c->cred.pid);
    n = readlink(link, exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = '\0';
    rs_socket_claim(exe, c->exe);
}

/* NULL when the peer may hold a connection (now tracked), else why not,
 * already noted. */
static const char *admission(rs_server *s, int fd, const struct ucred *cred, size_t *slot, char *why,
                             size_t why_len)
{
    const char *busy;

    if (!allowed(s->o.config, cred)) {
        snprintf(why, why_len, "uid %u (gid %u) is not allowed to use this signing socket", (unsigned)cred->uid,
                 (unsigned)cred->gid);
        note(s, "socket: pid %d: %s", (int)cred->pid, why);
        return why;
    }
    if ((busy = track(s, fd, cred->uid, slot)))
        note(s, "socket: uid %u pid %d: %s", (unsigned)cred->uid, (int)cred->pid, busy);
    return busy;
}

static void start_thread(rs_server *s, client *c)
{
    pthread_attr_t attr;
    pthread_t t;

    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, client_thread, c) != 0) {
        forget(s, c->fd);
        free(c);
    }
    pthread_attr_destroy(&attr);
}

static void admit(rs_server *s, int fd)
{
    struct timeval idle = { .tv_sec = RS_PROTO_IDLE_TIMEOUT_S }, send_limit = { .tv_sec = SEND_TIMEOUT_S };
    socklen_t len = sizeof(struct ucred);
    const char *refusal;
    char why[160];
    client *c = calloc(1, sizeof(*c));

    if (!c || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len) < 0) {
        free(c);
        close(fd);
        return;
    }
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_limit, sizeof(send_limit));
    if ((refusal = admission(s, fd, &c->cred, &c->slot, why, sizeof(why)))) {
        free(c);
        refuse(s, fd, refusal);
        return;
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof(idle));
    peer_exe(c);
    c->server = s;
    c->fd = fd;
    start_thread(s, c);
}

static void *accept_loop(void *arg)
{
    rs_server *s = arg;

    for (;;) {
        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        bool stopping;

        pthread_mutex_lock(&s->mu);
        stopping = s->stopping;
        pthread_mutex_unlock(&s->mu);
        if (stopping) {
            if (fd >= 0)
                close(fd);
            return NULL;
        }
        if (fd >= 0)
            admit(s, fd);
        else if (errno != EINTR && errno != ECONNABORTED && errno != EMFILE && errno != ENFILE)
            return NULL;
        else if (errno == EMFILE || errno == ENFILE)
            usleep(100000);
    }
}

static void server_free(rs_server *s)
{
    rs_socket_keys_free(&s->keys);
    free(s);
}

int rs_server_start(const rs_server_options *o, rs_server **out, rs_error *err)
{
    rs_server *s = calloc(1, sizeof(*s));

    *out = NULL;
    if (!s)
        return rs_fail(err, "out of memory");
    s->o = *o;
    if (rs_socket_keys_init(&s->keys, o->signers, o->n_signers, err) < 0) {
        server_free(s);
        return -1;
    }
    for (size_t i = 0; i < MAX_CLIENTS; i++)
        s->fds[i] = -1;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->idle, NULL);
    if (server_listen(o->config, &s->listen_fd, &s->passed, err) < 0) {
        server_free(s);
        return -1;
    }
    if (pthread_create(&s->acceptor, NULL, accept_loop, s) != 0) {
        close(s->listen_fd);
        if (!s->passed)
            unlink(o->config->socket);
        server_free(s);
        return rs_fail(err, "cannot start the socket thread");
    }
    *out = s;
    return 0;
}

/* accept() does not return for a flag: connect once so it looks. */
static void wake_acceptor(rs_server *s)
{
    rs_error err;
    int fd = -1;

    if (rs_client_connect(s->o.config->socket, &fd, &err) == 0)
        close(fd);
    else
        shutdown(s->listen_fd, SHUT_RDWR);
}

void rs_server_stop(rs_server *s)
{
    pthread_mutex_lock(&s->mu);
    s->stopping = true;
    for (size_t i = 0; i < MAX_CLIENTS; i++)
        if (s->fds[i] >= 0)
            shutdown(s->fds[i], SHUT_RDWR);
    pthread_mutex_unlock(&s->mu);
    wake_acceptor(s);
    pthread_join(s->acceptor, NULL);
    close(s->listen_fd);
    if (!s->passed)   /* systemd's socket stays for the next start */
        unlink(s->o.config->socket);
    pthread_mutex_lock(&s->mu);
    while (s->active > 0)
        pthread_cond_wait(&s->idle, &s->mu);
    pthread_mutex_unlock(&s->mu);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->idle);
    server_free(s);
}

#include "service/server.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "crypto/ossl.h"
#include "ops/offline.h"
#include "pipeline/files_json.h"
#include "service/metrics.h"
#include "service/proto.h"
#include "service/socket_policy.h"

#define MAX_CLIENTS 1024
/* Connections one uid may hold: `sign-template --via` opens up to 64,
 * one per worker; twice that leaves room for a second build, and one
 * hostile uid cannot take every slot. */
#define MAX_CLIENTS_PER_UID 128
/* A client that does not read its answers does not hold a thread. */
#define SEND_TIMEOUT_S 10
#define RS_STRINGIFY_(x) #x
#define RS_STRINGIFY(x) RS_STRINGIFY_(x)

typedef struct client {
    rs_server *server;
    int fd;
    struct ucred cred;
    char exe[256];               /* the peer's executable, for the log */
} client;

struct rs_server {
    rs_server_options o;
    int listen_fd;
    pthread_t acceptor;
    pthread_mutex_t mu;
    pthread_cond_t idle;
    int fds[MAX_CLIENTS];        /* open connections, -1 when free */
    uid_t uids[MAX_CLIENTS];     /* each one's peer */
    size_t active;
    bool stopping;
    bool passed;                 /* the socket came from systemd */
    rs_socket_keys keys;         /* the signers, their certificates and fingerprints */
};

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

/* Takes text, an answer from proto.h. */
static int answer(int fd, char *text, rs_error *err)
{
    _cleanup_free_ char *owned = text;

    if (!owned)
        return rs_fail(err, "out of memory");
    return rs_frame_write(fd, owned, strlen(owned), err);
}

/* What the key did: the digest it signed (tbs_digest), what that binds
 * to (the image digest, of this format), with which key, for whom. */
static json_t *log_entry(const client *c, const rs_offline_request *r, const char *fpr, const rs_bytes *sig)
{
    char digest[RS_DIGEST_STR], tbs[RS_DIGEST_STR], sig_sha[2 * SHA256_DIGEST_LENGTH + 1];
    uint8_t h[SHA256_DIGEST_LENGTH];

    rs_digest_format(&r->image_digest, digest, sizeof(digest));
    rs_digest_format(&r->tbs, tbs, sizeof(tbs));
    rs_sha256(sig->data, sig->len, h);
    rs_hex(h, sizeof(h), sig_sha);
    return json_pack("{s:{s:I, s:I, s:I, s:s}, s:s, s:s, s:s?, s:s, s:s, s:s, s:s, s:I}", "client", "uid",
                     (json_int_t)c->cred.uid, "gid", (json_int_t)c->cred.gid, "pid", (json_int_t)c->cred.pid, "exe",
                     c->exe, "format", r->format->name, "sig_type", r->format->sig_type, "path", r->file,
                     "signed_digest", digest, "tbs_digest", tbs, "signer_fingerprint", fpr, "signature_sha256",
                     sig_sha, "time", (json_int_t)(r->opts.signing_time ? r->opts.time : time(NULL)));
}

/* Every signature is a log line too, with the peer: the journal can be
 * searched by REPROSIGN_PEER_UID and REPROSIGN_DIGEST. */
static void note_signed(const client *c, const rs_offline_request *r, uint64_t index)
{
    char digest[RS_DIGEST_STR], uid[16];
    rs_log_fields f = { .package = r->file, .digest = digest, .peer_uid = uid };

    rs_digest_format(&r->image_digest, digest, sizeof(digest));
    snprintf(uid, sizeof(uid), "%u", (unsigned)c->cred.uid);
    rs_notef(c->server->o.note, c->server->o.note_ctx, &f,
             "socket: uid %u pid %d (%s): signed %s %s with the %s key, log entry %llu", (unsigned)c->cred.uid,
             (int)c->cred.pid, c->exe[0] ? c->exe : "?", r->format->name, r->file ? r->file : digest,
             r->format->sig_type, (unsigned long long)index);
}

/* Signs one request and returns the answer; the value leaves only once
 * its log entry is on disk. NULL: refused, for the reason in err. */
static char *serve_request(client *c, rs_frame_reader *rd, const char *msg, size_t len, rs_error *err)
{
    rs_server *s = c->server;
    rs_offline_request r = { 0 };
    _cleanup_bytes_ rs_bytes sig = { 0 };
    json_auto_t *entry = NULL;
    uint64_t index = 0;
    char *text = NULL;
    size_t i;
    struct timespec t0;
    int rc;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = rs_socket_sign(&s->keys, rd, msg, len, &r, &i, &sig, err);
    if (rc < 0 && err->transient == RS_TRANSIENT_TOKEN)
        rs_metrics_token_error(s->o.metrics);
    if (rc == 0 && !(entry = log_entry(c, &r, s->keys.fingerprints[i], &sig)))
        rs_fail(err, "out of memory");
    if (entry && rs_translog_append(s->o.log, &entry, 1, &index, err) == 0 &&
        !(text = rs_answer_signed(&sig, index)))
        rs_fail(err, "out of memory");
    if (text) {
        rs_metrics_signed(s->o.metrics, RS_FACE_SOCKET, (int)i, 1);
        rs_metrics_latency(s->o.metrics, RS_FACE_SOCKET, rs_metrics_since(&t0));
        note_signed(c, &r, index);
    }
    rs_offline_request_free(&r);
    return text;
}

static void serve_client(client *c)
{
    _cleanup_(rs_frame_reader_free) rs_frame_reader rd = { .fd = c->fd };
    rs_error err;
    bool eof = false;

    for (;;) {
        const char *msg;
        size_t len;
        char *text;

        if (rs_frame_next(&rd, &msg, &len, &eof, &err) < 0 || eof)
            break;
        err.msg[0] = '\0';
        if (!(text = serve_request(c, &rd, msg, len, &err))) {
            rs_notef(c->server->o.note, c->server->o.note_ctx, &(rs_log_fields){ .priority = LOG_WARNING },
                     "socket: uid %u pid %d: refused: %s", (unsigned)c->cred.uid, (int)c->cred.pid, err.msg);
            text = rs_answer_refused(err.msg);
        }
        if (answer(c->fd, text, &err) < 0)
            break;
    }
}

static void forget(rs_server *s, int fd)
{
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < MAX_CLIENTS; i++)
        if (s->fds[i] == fd)
            s->fds[i] = -1;
    close(fd);
    s->active--;
    pthread_cond_broadcast(&s->idle);
    pthread_mutex_unlock(&s->mu);
}

static void *client_thread(void *arg)
{
    client *c = arg;

    serve_client(c);
    forget(c->server, c->fd);
    free(c);
    return NULL;
}

/* NULL when the connection has a slot, else why not. */
static const char *track(rs_server *s, int fd, uid_t uid)
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
        s->active++;
        why = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    return why;
}

static void refuse(rs_server *s, int fd, const char *why)
{
    rs_error err;

    answer(fd, rs_answer_refused(why), &err);
    close(fd);
}

static void peer_exe(client *c)
{
    char link[64];
    ssize_t n;

    snprintf(link, sizeof(link), "/proc/%d/exe", (int)c->cred.pid);
    n = readlink(link, c->exe, sizeof(c->exe) - 1);
    c->exe[n > 0 ? n : 0] = '\0';
}

static void admit(rs_server *s, int fd)
{
    struct timeval idle = { .tv_sec = RS_PROTO_IDLE_TIMEOUT_S }, send_limit = { .tv_sec = SEND_TIMEOUT_S };
    socklen_t len = sizeof(struct ucred);
    const char *busy;
    char why[160];
    pthread_attr_t attr;
    pthread_t t;
    client *c = calloc(1, sizeof(*c));

    if (!c || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len) < 0) {
        free(c);
        close(fd);
        return;
    }
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_limit, sizeof(send_limit));
    if (!allowed(s->o.config, &c->cred)) {
        snprintf(why, sizeof(why), "uid %u (gid %u) is not allowed to use this signing socket",
                 (unsigned)c->cred.uid, (unsigned)c->cred.gid);
        note(s, "socket: pid %d: %s", (int)c->cred.pid, why);
        free(c);
        refuse(s, fd, why);
        return;
    }
    if ((busy = track(s, fd, c->cred.uid))) {
        note(s, "socket: uid %u pid %d: %s", (unsigned)c->cred.uid, (int)c->cred.pid, busy);
        free(c);
        refuse(s, fd, busy);
        return;
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof(idle));
    peer_exe(c);
    c->server = s;
    c->fd = fd;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, client_thread, c) != 0) {
        free(c);
        forget(s, fd);
    }
    pthread_attr_destroy(&attr);
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

/* A socket file left by a killed service is replaced; a live one is not. */
static int clear_stale(const char *path, const struct sockaddr_un *addr, rs_error *err)
{
    struct stat st;
    _cleanup_close_ int probe = -1;

    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : rs_fail(err, "%s: %s", path, strerror(errno));
    if (!S_ISSOCK(st.st_mode))
        return rs_fail(err, "%s: exists and is not a socket", path);
    probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (probe >= 0 && connect(probe, (const struct sockaddr *)addr, sizeof(*addr)) == 0)
        return rs_fail(err, "%s: another service is listening on it", path);
    return unlink(path) == 0 ? 0 : rs_fail(err, "%s: %s", path, strerror(errno));
}

static int listen_on(const rs_service_config *c, int *out, bool *passed, rs_error *err)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    _cleanup_close_ int fd = -1;
    const char *path = c->socket;
    mode_t old_mask;
    int rc;

    /* Under reprosign.socket, systemd made it (SocketMode=, SocketGroup=). */
    if ((rc = rs_daemon_listen_fd(path, out, err)) != 0)
        return *passed = rc > 0, rc > 0 ? 0 : -1;
    if (strlen(path) >= sizeof(addr.sun_path))
        return rs_fail(err, "%s: the socket path is too long", path);
    strcpy(addr.sun_path, path);
    if (clear_stale(path, &addr, err) < 0)
        return -1;
    if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return rs_fail(err, "socket: %s", strerror(errno));
    /* 0660: the service's group, or socket.group's, may connect; the
     * allowlist (SO_PEERCRED) then decides who may sign, and a refused
     * member gets the reason. The mode comes from the umask at bind(), so
     * no chmod goes through a path a symlink could have replaced. */
    old_mask = umask(0117);
    rc = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
    umask(old_mask);
    if (rc < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    if ((c->socket_group_set && fchownat(AT_FDCWD, path, (uid_t)-1, c->socket_group, AT_SYMLINK_NOFOLLOW) < 0) ||
        listen(fd, 256) < 0) {
        unlink(path);
        return rs_fail(err, "%s: %s", path, strerror(errno));
    }
    *out = TAKE_FD(fd);
    return 0;
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
    if (listen_on(o->config, &s->listen_fd, &s->passed, err) < 0) {
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

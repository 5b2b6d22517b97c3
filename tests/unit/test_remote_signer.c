/* The socket's image signer against a stand-in service on a real unix
 * socket: its signatures equal a local key's; one connection serves many
 * signatures; a pooled connection the service closed is replaced once,
 * while a refusal is not retried; a service that hangs up on every
 * request fails with a reason naming the socket. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"
#include "ops/offline.h"
#include "service/proto.h"
#include "service/remote_signer.h"

typedef enum { SERVE, ONE_THEN_CLOSE, REFUSE, HANG_UP } behaviour;

typedef struct stand_in {
    char path[108];
    int listen_fd;
    pthread_t thread;
    behaviour behaviour;
    int connections;
    int stop;
    rs_signer *key;
    rs_known_certs known;
} stand_in;

static char *answer_for(stand_in *s, const char *msg, size_t len)
{
    rs_offline_request r;
    rs_bytes sig = { 0 };
    rs_error err;
    char *text;

    if (s->behaviour == REFUSE)
        return rs_answer_refused("not today");
    if (rs_offline_request_read_known(msg, len, &s->known, &r, &err) < 0)
        return rs_answer_refused(err.msg);
    text = rs_offline_sign(&r, s->key, &sig, &err) == 0 ? rs_answer_signed(&sig, 0) : rs_answer_refused(err.msg);
    rs_offline_request_free(&r);
    rs_bytes_free(&sig);
    return text;
}

/* One connection at a time, until the client closes it or the
 * behaviour says to. */
static void serve(stand_in *s, int fd)
{
    rs_frame_reader rd = { .fd = fd };
    const char *msg;
    size_t len;
    bool eof;
    rs_error err;

    while (rs_frame_next(&rd, &msg, &len, &eof, &err) == 0 && !eof && s->behaviour != HANG_UP) {
        char *text = answer_for(s, msg, len);

        if (!text || rs_frame_write(fd, text, strlen(text), &err) < 0)
            abort();
        free(text);
        if (s->behaviour == ONE_THEN_CLOSE)
            break;
    }
    rs_frame_reader_free(&rd);
    close(fd);
}

static void *accept_loop(void *arg)
{
    stand_in *s = arg;

    for (;;) {
        int fd = accept(s->listen_fd, NULL, NULL);

        if (fd < 0 || __atomic_load_n(&s->stop, __ATOMIC_SEQ_CST)) {
            if (fd >= 0)
                close(fd);
            return NULL;
        }
        __atomic_add_fetch(&s->connections, 1, __ATOMIC_SEQ_CST);
        serve(s, fd);
    }
}

static void start(stand_in *s, const char *dir, rs_signer *key)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    rs_error err;

    memset(s, 0, sizeof(*s));
    snprintf(s->path, sizeof(s->path), "%s/sock", dir);
    strcpy(addr.sun_path, s->path);
    s->key = key;
    if (rs_known_certs_add(&s->known, key->cert, &err) < 0 || (s->listen_fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0 ||
        bind(s->listen_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(s->listen_fd, 16) < 0 ||
        pthread_create(&s->thread, NULL, accept_loop, s) != 0)
        abort();
}

static void stop(stand_in *s)
{
    rs_error err;
    int fd;

    __atomic_store_n(&s->stop, 1, __ATOMIC_SEQ_CST);
    if (rs_client_connect(s->path, &fd, &err) == 0)
        close(fd);
    pthread_join(s->thread, NULL);
    close(s->listen_fd);
    unlink(s->path);
    rs_known_certs_free(&s->known);
}

/* Signs digest byte `b` through the socket, and checks the result is
 * what the local key gives. Returns 0 when the socket signed. */
static int sign_one(rs_image_signer *remote, rs_image_signer *local, uint8_t b, rs_error *err)
{
    rs_digest d = { .md = EVP_sha256(), .len = 32 };
    rs_sign_options opts = { .md = EVP_sha256() };
    rs_bytes got = { 0 }, want = { 0 };
    int rc;

    memset(d.bytes, b, d.len);
    rc = rs_image_signer_sign(remote, &rs_format_pe, &d, &opts, "app.efi", -1, &got, err);
    if (rc == 0) {
        CHECK(rs_image_signer_sign(local, &rs_format_pe, &d, &opts, "app.efi", -1, &want, err) == 0);
        CHECK(got.len > 0 && got.len == want.len && memcmp(got.data, want.data, got.len) == 0);
    }
    rs_bytes_free(&got);
    rs_bytes_free(&want);
    return rc;
}

static int connections(stand_in *s)
{
    return __atomic_load_n(&s->connections, __ATOMIC_SEQ_CST);
}

static void run(const char *dir, rs_signer *key, behaviour b, int signatures, bool succeed, int want_connections,
                const char *says)
{
    stand_in s;
    rs_image_signer *remote = NULL, *local = NULL;
    rs_error err = { 0 };

    start(&s, dir, key);
    s.behaviour = b;
    CHECK(rs_image_signer_local(key, &local, &err) == 0);
    CHECK(rs_image_signer_remote(s.path, key->cert, NULL, &remote, &err) == 0);
    for (int i = 0; remote && i < signatures; i++) {
        int rc = sign_one(remote, local, (uint8_t)(0x10 + i), &err);

        CHECK((rc == 0) == succeed);
        if (says && !strstr(err.msg, says)) {
            fprintf(stderr, "error \"%s\" does not say \"%s\"\n", err.msg, says);
            CHECK(!"the error gives the reason");
        }
        if (!succeed)
            CHECK(strstr(err.msg, s.path) != NULL);
    }
    if (remote)
        rs_image_signer_free(remote);
    rs_image_signer_free(local);
    stop(&s);
    if (connections(&s) != want_connections) {
        fprintf(stderr, "behaviour %d: %d connections, expected %d\n", (int)b, connections(&s), want_connections);
        CHECK(!"connections as expected");
    }
}

int main(void)
{
    char dir[] = "/tmp/rs-remote-XXXXXX", key_path[128], cert_path[128];
    rs_signer *key = NULL;
    rs_image_signer *remote = NULL;
    rs_error err;

    if (!mkdtemp(dir))
        abort();
    snprintf(key_path, sizeof(key_path), "%s/key.pem", dir);
    snprintf(cert_path, sizeof(cert_path), "%s/cert.pem", dir);
    harness_make_key(key_path, cert_path);
    if (rs_signer_open(key_path, cert_path, &key, &err) < 0)
        abort();

    /* One connection, made when the signer opens, serves them all. */
    run(dir, key, SERVE, 3, true, 1, NULL);
    /* Each answer closes its connection: every later request finds its
     * pooled connection closed and goes again on a new one. */
    run(dir, key, ONE_THEN_CLOSE, 3, true, 3, NULL);
    /* A refusal is an answer: not sent again. */
    run(dir, key, REFUSE, 1, false, 1, "not today");
    /* Closed without an answer: sent again once, then the reason. */
    run(dir, key, HANG_UP, 1, false, 2, "closed the connection without an answer");

    CHECK(rs_image_signer_remote("/nonexistent/sock", key->cert, NULL, &remote, &err) < 0);
    CHECK(strstr(err.msg, "/nonexistent/sock: cannot connect") != NULL);

    rs_signer_free(key);
    unlink(key_path);
    unlink(cert_path);
    rmdir(dir);
    return harness_finish("test_remote_signer");
}

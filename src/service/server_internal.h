/* Inside the build-time socket (server.h), shared by the files that do
 * one job each:
 *   server.c          start and stop, admitting connections, their threads;
 *   server_listen.c   the listening socket, or systemd's;
 *   server_serve.c    one connection's requests: sign, log, answer. */
#ifndef RS_SERVER_INTERNAL_H
#define RS_SERVER_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "service/server.h"
#include "service/socket_policy.h"

/* Connections held at once: eight uids at MAX_CLIENTS_PER_UID (server.c)
 * each; past it a client is turned away. */
#define MAX_CLIENTS 1024
/* The bytes of requests one uid's connections may hold at once, counted
 * by their buffers (rs_frame_reader.charge): its 128 connections at the
 * 4 KiB each keeps between requests, and room for some 24 requests of
 * the largest size (RS_PROTO_MAX_REQUEST) on top. */
#define MAX_BUFFERED_PER_UID (2 * 1024 * 1024)

typedef struct client {
    rs_server *server;
    int fd;
    size_t slot;                 /* in rs_server's fds, uids and held */
    struct ucred cred;
    char exe[RS_SOCKET_CLAIM_SIZE];  /* the peer's executable, for the log, escaped:
                                      * its name is the peer's choice */
} client;

struct rs_server {
    rs_server_options o;
    int listen_fd;
    pthread_t acceptor;
    pthread_mutex_t mu;
    pthread_cond_t idle;
    int fds[MAX_CLIENTS];        /* open connections, -1 when free */
    uid_t uids[MAX_CLIENTS];     /* each one's peer */
    size_t held[MAX_CLIENTS];    /* each one's buffer, counted against its uid */
    size_t active;
    bool stopping;
    bool passed;                 /* the socket came from systemd */
    rs_socket_keys keys;         /* the signers, their certificates and fingerprints */
};

/* Serves one connection until the peer closes it or it fails. */
void server_serve_client(client *c);
/* The frame reader's charge (proto.h) for a client: refuses a buffer
 * that would take its uid past MAX_BUFFERED_PER_UID. */
int server_charge(void *client, size_t cap, rs_error *err);
/* Sends text, an answer from proto.h, and frees it. */
int server_answer(int fd, char *text, rs_error *err);
/* The socket to accept on: systemd's (*passed), or a new one at c->socket. */
int server_listen(const rs_service_config *c, int *out, bool *passed, rs_error *err);

#endif

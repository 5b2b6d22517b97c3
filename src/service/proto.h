/* The build-time socket's wire format: each message is a 4-byte
 * big-endian length and that many bytes of JSON. A client sends the
 * offline-signing request (ops/offline.h), naming the certificate by its
 * SHA-256 (rs_offline_request_write_wire) or carrying it as a request
 * file does; the service answers
 * {"ok": true, "signature": BASE64, "log_index": N} with the raw signature
 * value, or {"ok": false, "error": TEXT}. */
#ifndef RS_PROTO_H
#define RS_PROTO_H

#include <jansson.h>
#include <sys/types.h>

#include "base/bytes.h"
#include "base/error.h"
#include "ops/offline.h"

#define RS_PROTO_MAX_FRAME (1024 * 1024)
/* The largest request the service reads (rs_frame_reader.max_frame): a
 * request is a few hundred bytes, a few kilobytes with its certificate
 * and chain carried along; the rest of the megabyte a frame may be is
 * memory a client could make the service hold on each connection. */
#define RS_PROTO_MAX_REQUEST (64 * 1024)
/* The service closes a connection that sends nothing for this long. */
#define RS_PROTO_IDLE_TIMEOUT_S 60
/* A client gives up on an answer after this long: a wedged service fails
 * a build instead of hanging it. Generous, since requests queue for a
 * token that may take a second a signature. */
#define RS_PROTO_ANSWER_TIMEOUT_S 600
/* Once a message has begun, all of it must arrive within this long: a
 * client that trickles bytes cannot hold its connection (and a slot)
 * forever. A request is a few hundred bytes, sent in one go. */
#define RS_PROTO_FRAME_DEADLINE_S 10
/* Descriptors (attached images, see rs_client_send_image) a connection
 * may have received and not yet used; more closes it. */
#define RS_PROTO_MAX_FDS 16

int rs_frame_write(int fd, const char *data, size_t len, rs_error *err);
/* One send of data with the descriptor attach (SCM_RIGHTS) on it; attach
 * < 0: none. Returns what send() does. */
ssize_t rs_send_with_fd(int fd, const void *data, size_t len, int attach);
/* A frame with a file descriptor attached (SCM_RIGHTS); attach < 0: none. */
int rs_frame_write_fd(int fd, const char *data, size_t len, int attach, rs_error *err);

/* Reads frames from one connection. It asks the kernel for as much as is
 * there, so a frame usually costs one recv, not one for its length and
 * one for its body; bytes of the next frame wait in buf. */
typedef struct rs_frame_reader {
    int fd;
    rs_bytes buf;
    size_t start;                /* of the unread bytes in buf */
    int fds[RS_PROTO_MAX_FDS];   /* received descriptors, oldest first */
    size_t n_fds;
    size_t max_frame;            /* a longer frame is refused; 0: RS_PROTO_MAX_FRAME */
    /* Asked before buf grows to cap bytes, and told when it shrinks (0
     * when the reader is freed): the service counts each connection's
     * buffer against its peer's share. < 0 refuses the growth, and the
     * frame fails with its reason. NULL: no such count. */
    int (*charge)(void *ctx, size_t cap, rs_error *err);
    void *charge_ctx;
} rs_frame_reader;

/* The next frame's body, valid until the next call. *eof is set
 * (and 0 returned) when the peer closed before a frame began. */
int rs_frame_next(rs_frame_reader *r, const char **msg, size_t *len, bool *eof, rs_error *err);
/* Once the last frame is done with: gives back a buffer grown for a large
 * frame, keeping any bytes already received. */
void rs_frame_release(rs_frame_reader *r);
/* The oldest descriptor received and not yet taken (the caller owns it),
 * or -1. */
int rs_frame_take_fd(rs_frame_reader *r);
/* Bytes received and not yet returned as a frame. */
size_t rs_frame_pending(const rs_frame_reader *r);
void rs_frame_reader_free(rs_frame_reader *r);

/* ---- answers ---- */

/* The service's answer for a signature value and its log index, or for a
 * refusal: compact JSON text, NULL when out of memory. */
char *rs_answer_signed(const rs_bytes *sig, uint64_t log_index);
char *rs_answer_refused(const char *why);
/* Reads an answer into the signature value and log index (which may be
 * NULL); a refusal fails with its reason and sets *refused. */
int rs_answer_read(const char *msg, size_t len, rs_bytes *sig, uint64_t *log_index, bool *refused, rs_error *err);

/* ---- the client side ---- */

/* One connection to the service. Requests may be sent ahead of their
 * answers (a client with work queued keeps the service busy instead of
 * making it wait for each round trip); answers come back in order. */
typedef struct rs_client {
    int fd;
    rs_frame_reader rd;
    size_t in_flight;
    bool broken;                 /* the connection failed (not a refusal) */
    X509 *cert;                  /* the last request's, and its fingerprint: */
    char cert_sha256[65];        /* a client sends many for one certificate */
} rs_client;

int rs_client_connect(const char *path, int *fd, rs_error *err);
int rs_client_open(const char *path, rs_client *c, rs_error *err);
void rs_client_close(rs_client *c);
int rs_client_send(rs_client *c, const rs_offline_request *r, rs_error *err);
/* The same for a format whose key signs the image digest itself (a
 * module): the service signs only bytes it has read, so the image goes
 * along, copied from image_fd into a sealed memfd. */
int rs_client_send_image(rs_client *c, const rs_offline_request *r, int image_fd, rs_error *err);
/* The answer to the oldest request in flight: its signature value. */
int rs_client_receive(rs_client *c, rs_bytes *sig, uint64_t *log_index, rs_error *err);
/* Sends one request and waits for its signature value. */
int rs_client_sign(rs_client *c, const rs_offline_request *r, rs_bytes *sig, uint64_t *log_index, rs_error *err);
/* The same, attaching the image when the request's format needs it
 * (image_fd < 0: none at hand, and such a request is refused here). */
int rs_client_sign_image(rs_client *c, const rs_offline_request *r, int image_fd, rs_bytes *sig,
                         uint64_t *log_index, rs_error *err);
/* Connects, signs one request, disconnects. Errors are prefixed with the socket. */
int rs_sign_via(const char *path, const rs_offline_request *r, rs_bytes *sig, rs_error *err);

#endif

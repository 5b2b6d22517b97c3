#include "service/proto.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "crypto/ossl.h"

ssize_t rs_send_with_fd(int fd, const void *data, size_t len, int attach)
{
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } control = { 0 };
    struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
    struct cmsghdr *c;

    if (attach < 0)
        return send(fd, data, len, MSG_NOSIGNAL);
    m.msg_control = control.buf;
    m.msg_controllen = sizeof(control.buf);
    c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &attach, sizeof(int));
    return sendmsg(fd, &m, MSG_NOSIGNAL);
}

static int send_all(int fd, const void *data, size_t len, int attach, rs_error *err)
{
    const uint8_t *p = data;

    while (len) {
        /* The first chunk carries the descriptor, if any. */
        ssize_t n = rs_send_with_fd(fd, p, len, attach);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return rs_fail(err, "send: %s", strerror(errno));
        attach = -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int rs_frame_write(int fd, const char *data, size_t len, rs_error *err)
{
    return rs_frame_write_fd(fd, data, len, -1, err);
}

int rs_frame_write_fd(int fd, const char *data, size_t len, int attach, rs_error *err)
{
    _cleanup_free_ uint8_t *frame = NULL;

    if (len > RS_PROTO_MAX_FRAME)
        return rs_fail(err, "message too large");
    /* Length and body in one send: sent apart, the peer wakes up for the
     * four bytes and again for the rest, twice per message. */
    if (!(frame = malloc(len + 4)))
        return rs_fail(err, "out of memory");
    frame[0] = (uint8_t)(len >> 24);
    frame[1] = (uint8_t)(len >> 16);
    frame[2] = (uint8_t)(len >> 8);
    frame[3] = (uint8_t)len;
    memcpy(frame + 4, data, len);
    return send_all(fd, frame, len + 4, attach, err);
}

#define FIRST_READ 4096

static uint32_t frame_length(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Room for `want` more bytes after the unread ones, moved to the front. */
static int make_room(rs_frame_reader *r, size_t want, rs_error *err)
{
    size_t unread = r->buf.len - r->start;
    uint8_t *p;

    if (r->start)
        memmove(r->buf.data, r->buf.data + r->start, unread);
    r->buf.len = unread;
    r->start = 0;
    if (r->buf.cap - unread >= want)
        return 0;
    if (!(p = realloc(r->buf.data, unread + want)))
        return rs_fail(err, "out of memory");
    r->buf.data = p;
    r->buf.cap = unread + want;
    return 0;
}

/* Queues the descriptors a message carried; past the limit, closes them
 * and fails. */
static int keep_fds(rs_frame_reader *r, struct msghdr *m, rs_error *err)
{
    bool overflow = false;

    for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
        size_t n = c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS
                       ? (c->cmsg_len - CMSG_LEN(0)) / sizeof(int) : 0;

        for (size_t i = 0; i < n; i++) {
            int fd;

            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
            if (r->n_fds < RS_PROTO_MAX_FDS)
                r->fds[r->n_fds++] = fd;
            else {
                close(fd);
                overflow = true;
            }
        }
    }
    if (overflow || (m->msg_flags & MSG_CTRUNC))
        return rs_fail(err, "more than %d descriptors sent ahead of their requests", RS_PROTO_MAX_FDS);
    return 0;
}

/* A message under way must be whole by its deadline. */
static int wait_readable(rs_frame_reader *r, const struct timespec *deadline, rs_error *err)
{
    struct timespec now;
    long ms;
    int n;

    clock_gettime(CLOCK_MONOTONIC, &now);
    ms = (deadline->tv_sec - now.tv_sec) * 1000 + (deadline->tv_nsec - now.tv_nsec) / 1000000;
    if (ms > 0 && (n = poll(&(struct pollfd){ .fd = r->fd, .events = POLLIN }, 1, (int)ms)) != 0)
        return n > 0 || errno == EINTR ? 0 : rs_fail(err, "poll: %s", strerror(errno));
    return rs_fail(err, "timed out: a message did not arrive whole within %d s", RS_PROTO_FRAME_DEADLINE_S);
}

/* 1: the peer closed. */
static int receive(rs_frame_reader *r, const struct timespec *deadline, rs_error *err)
{
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(RS_PROTO_MAX_FDS * sizeof(int))];
    } control;

    for (;;) {
        struct iovec iov = { .iov_base = r->buf.data + r->buf.len, .iov_len = r->buf.cap - r->buf.len };
        struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                            .msg_controllen = sizeof(control.buf) };
        ssize_t n;

        if (deadline && wait_readable(r, deadline, err) < 0)
            return -1;
        n = recvmsg(r->fd, &m, MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return rs_fail(err, "recv: %s", errno == EAGAIN ? "timed out" : strerror(errno));
        if (keep_fds(r, &m, err) < 0)
            return -1;
        r->buf.len += (size_t)n;
        return n == 0;
    }
}

static bool start_deadline(struct timespec *deadline)
{
    clock_gettime(CLOCK_MONOTONIC, deadline);
    deadline->tv_sec += RS_PROTO_FRAME_DEADLINE_S;
    return true;
}

int rs_frame_take_fd(rs_frame_reader *r)
{
    int fd;

    if (!r->n_fds)
        return -1;
    fd = r->fds[0];
    memmove(r->fds, r->fds + 1, (--r->n_fds) * sizeof(int));
    return fd;
}

int rs_frame_next(rs_frame_reader *r, const char **msg, size_t *len, bool *eof, rs_error *err)
{
    size_t unread, need = 4;
    uint32_t flen = 0;
    struct timespec deadline = { 0 };
    bool begun = false;
    int rc;

    *eof = false;
    for (;;) {
        unread = r->buf.len - r->start;
        if (unread >= 4) {
            flen = frame_length(r->buf.data + r->start);
            if (flen == 0 || flen > RS_PROTO_MAX_FRAME)
                return rs_fail(err, "a message of %u bytes (the limit is %d)", flen, RS_PROTO_MAX_FRAME);
            need = 4 + (size_t)flen;
            if (unread >= need)
                break;
        }
        /* The clock starts at a message's first byte; before that, the
         * socket's idle timeout applies. */
        if (unread && !begun)
            begun = start_deadline(&deadline);
        if (make_room(r, (need > FIRST_READ ? need : FIRST_READ) - unread, err) < 0 ||
            (rc = receive(r, begun ? &deadline : NULL, err)) < 0)
            return -1;
        if (!begun && r->buf.len - r->start)
            begun = start_deadline(&deadline);
        if (rc == 1) {
            if (r->buf.len - r->start == 0) {
                *eof = true;
                return 0;
            }
            return rs_fail(err, "the connection closed in the middle of a message");
        }
    }
    *msg = (const char *)r->buf.data + r->start + 4;
    *len = flen;
    r->start += need;
    return 0;
}

size_t rs_frame_pending(const rs_frame_reader *r)
{
    return r->buf.len - r->start;
}

void rs_frame_reader_free(rs_frame_reader *r)
{
    rs_bytes_free(&r->buf);
    r->start = 0;
    while (r->n_fds)
        close(r->fds[--r->n_fds]);
}

static char *dump(json_t *doc)
{
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;

    json_decref(doc);
    return text;
}

char *rs_answer_signed(const rs_bytes *sig, uint64_t log_index)
{
    _cleanup_free_ char *b64 = rs_base64_encode(sig->data, sig->len);

    return b64 ? dump(json_pack("{s:b, s:s, s:I}", "ok", 1, "signature", b64, "log_index", (json_int_t)log_index))
               : NULL;
}

char *rs_answer_refused(const char *why)
{
    return dump(json_pack("{s:b, s:s}", "ok", 0, "error", why));
}

int rs_answer_read(const char *msg, size_t len, rs_bytes *sig, uint64_t *log_index, bool *refused, rs_error *err)
{
    json_auto_t *doc = json_loadb(msg, len, JSON_REJECT_DUPLICATES, NULL);
    const char *b64;

    *refused = false;
    if (!json_is_object(doc))
        return rs_fail(err, "the service sent an answer that is not JSON");
    if (!json_is_true(json_object_get(doc, "ok"))) {
        const char *why = json_string_value(json_object_get(doc, "error"));

        *refused = true;
        return rs_fail(err, "%s", why && *why ? why : "refused, with no reason given");
    }
    if (log_index)
        *log_index = (uint64_t)json_integer_value(json_object_get(doc, "log_index"));
    b64 = json_string_value(json_object_get(doc, "signature"));
    if (!b64 || !*b64)
        return rs_fail(err, "the service sent no signature");
    if (rs_base64_decode(b64, 12288, sig, err) < 0)
        return rs_fail(err, "the service sent a signature that is not base64");
    return 0;
}

int rs_client_connect(const char *path, int *fd, rs_error *err)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    _cleanup_close_ int s = -1;

    if (strlen(path) >= sizeof(addr.sun_path))
        return rs_fail(err, "the socket path is too long");
    strcpy(addr.sun_path, path);
    if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return rs_fail(err, "socket: %s", strerror(errno));
    if (connect(s, (struct sockaddr *)&addr, sizeof(addr)) < 0)
        return rs_fail(err, "cannot connect: %s", strerror(errno));
    *fd = TAKE_FD(s);
    return 0;
}

int rs_client_open(const char *path, rs_client *c, rs_error *err)
{
    struct timeval tv = { .tv_sec = RS_PROTO_ANSWER_TIMEOUT_S };

    *c = (rs_client){ .fd = -1 };
    if (rs_client_connect(path, &c->fd, err) < 0)
        return -1;
    if (setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
        rs_client_close(c);
        return rs_fail(err, "setsockopt: %s", strerror(errno));
    }
    c->rd.fd = c->fd;
    return 0;
}

void rs_client_close(rs_client *c)
{
    if (c->fd >= 0)
        close(c->fd);
    rs_frame_reader_free(&c->rd);
    X509_free(c->cert);
    *c = (rs_client){ .fd = -1 };
}

static int remember_cert(rs_client *c, X509 *cert, rs_error *err)
{
    if (c->cert && X509_cmp(c->cert, cert) == 0)
        return 0;
    if (!X509_up_ref(cert))
        return rs_fail(err, "out of memory");
    X509_free(c->cert);
    c->cert = cert;
    rs_x509_fingerprint(cert, c->cert_sha256);
    return c->cert_sha256[0] ? 0 : rs_fail(err, "cannot compute the certificate's fingerprint");
}

static int read_answer(rs_client *c, rs_bytes *sig, uint64_t *log_index, bool *refused, rs_error *err)
{
    const char *msg;
    size_t len;
    bool eof;

    if (rs_frame_next(&c->rd, &msg, &len, &eof, err) < 0 || eof) {
        c->broken = true;
        return eof ? rs_fail(err, "the service closed the connection without an answer")
                   : rs_error_prefix(err, "waiting for the service's answer");
    }
    /* Answers come one per request: anything more is not from a service. */
    if (c->in_flight <= 1 && rs_frame_pending(&c->rd))
        return rs_fail(err, "the service sent more answers than requests");
    if (c->in_flight)
        c->in_flight--;
    return rs_answer_read(msg, len, sig, log_index, refused, err);
}

static int send_request(rs_client *c, const rs_offline_request *r, int attach, rs_error *err)
{
    _cleanup_free_ char *json = NULL;
    bool refused = false;
    rs_error send_err;
    rs_bytes ignored = { 0 };

    if (remember_cert(c, r->cert, err) < 0 || rs_offline_request_write_wire(r, c->cert_sha256, &json, err) < 0)
        return -1;
    if (rs_frame_write_fd(c->fd, json, strlen(json), attach, &send_err) == 0) {
        c->in_flight++;
        return 0;
    }
    /* A refused client is told why before the service closes: that
     * answer says more than the failed send. Anything else read here (an
     * error, or the answer to an earlier request) does not. */
    if (read_answer(c, &ignored, NULL, &refused, err) == 0 || !refused)
        *err = send_err;
    c->broken = !refused;
    rs_bytes_free(&ignored);
    return -1;
}

int rs_client_send(rs_client *c, const rs_offline_request *r, rs_error *err)
{
    return send_request(c, r, -1, err);
}

/* A copy the service can trust to stay as it read it: sealed against
 * every change. */
static int sealed_copy(int image_fd, rs_error *err)
{
    _cleanup_close_ int fd = memfd_create("reprosign-image", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    struct stat st;
    off_t off = 0;

    if (fd < 0)
        return rs_fail(err, "memfd_create: %s", strerror(errno));
    if (fstat(image_fd, &st) < 0)
        return rs_fail(err, "fstat: %s", strerror(errno));
    while (off < st.st_size) {
        ssize_t n = sendfile(fd, image_fd, &off, (size_t)(st.st_size - off));

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return rs_fail(err, "copying the image: %s", n < 0 ? strerror(errno) : "it shrank");
    }
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
        return rs_fail(err, "sealing the image: %s", strerror(errno));
    return TAKE_FD(fd);
}

int rs_client_send_image(rs_client *c, const rs_offline_request *r, int image_fd, rs_error *err)
{
    _cleanup_close_ int copy = -1;
    rs_offline_request wire = *r;   /* shallow: only the flag differs */

    if (!r->format->key_signs_image_digest)
        return send_request(c, r, -1, err);
    if (image_fd < 0)
        return rs_fail(err, "the service signs a %s only from its bytes, and they are not at hand here "
                            "(sign the file itself, or an unpacked tree, with --via)", r->format->name);
    if ((copy = sealed_copy(image_fd, err)) < 0)
        return -1;
    wire.image_attached = true;
    return send_request(c, &wire, copy, err);
}

int rs_client_receive(rs_client *c, rs_bytes *sig, uint64_t *log_index, rs_error *err)
{
    bool refused = false;

    if (!c->in_flight)
        return rs_fail(err, "internal error: no request is waiting for an answer");
    return read_answer(c, sig, log_index, &refused, err);
}

int rs_client_sign(rs_client *c, const rs_offline_request *r, rs_bytes *sig, uint64_t *log_index, rs_error *err)
{
    return rs_client_sign_image(c, r, -1, sig, log_index, err);
}

int rs_client_sign_image(rs_client *c, const rs_offline_request *r, int image_fd, rs_bytes *sig,
                         uint64_t *log_index, rs_error *err)
{
    if (rs_client_send_image(c, r, image_fd, err) < 0)
        return -1;
    return rs_client_receive(c, sig, log_index, err);
}

int rs_sign_via(const char *path, const rs_offline_request *r, rs_bytes *sig, rs_error *err)
{
    _cleanup_(rs_client_close) rs_client c = { .fd = -1 };

    if (rs_client_open(path, &c, err) < 0 || rs_client_sign(&c, r, sig, NULL, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

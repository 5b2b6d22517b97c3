/* Frames on the build-time socket (proto.h): a 4-byte big-endian length
 * and that many bytes, descriptors riding along. */
#include "service/proto.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"

/* What a reader asks for at first, and keeps between frames. */
#define FIRST_READ 4096

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

static uint32_t frame_length(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The unread bytes moved to the front of the buffer. */
static void compact(rs_frame_reader *r)
{
    size_t unread = r->buf.len - r->start;

    if (r->start)
        memmove(r->buf.data, r->buf.data + r->start, unread);
    r->buf.len = unread;
    r->start = 0;
}

/* The buffer resized to cap bytes: a growth counted before, a shrink after. */
static int resize(rs_frame_reader *r, size_t cap, rs_error *err)
{
    bool grows = cap > r->buf.cap;
    rs_error ignored;
    uint8_t *p;

    if (grows && r->charge && r->charge(r->charge_ctx, cap, err) < 0)
        return -1;
    if (!(p = realloc(r->buf.data, cap))) {
        if (grows && r->charge)
            r->charge(r->charge_ctx, r->buf.cap, &ignored);
        return rs_fail(err, "out of memory");
    }
    r->buf.data = p;
    r->buf.cap = cap;
    if (!grows && r->charge)
        r->charge(r->charge_ctx, cap, &ignored);
    return 0;
}

/* Room for `want` more bytes after the unread ones, moved to the front. */
static int make_room(rs_frame_reader *r, size_t want, rs_error *err)
{
    compact(r);
    if (r->buf.cap - r->buf.len >= want)
        return 0;
    return resize(r, r->buf.len + want, err);
}

void rs_frame_release(rs_frame_reader *r)
{
    rs_error ignored;

    compact(r);
    if (r->buf.cap > FIRST_READ && r->buf.len <= FIRST_READ)
        resize(r, FIRST_READ, &ignored);
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
    size_t unread, need = 4, max = r->max_frame ? r->max_frame : RS_PROTO_MAX_FRAME;
    uint32_t flen = 0;
    struct timespec deadline = { 0 };
    bool begun = false;
    int rc;

    *eof = false;
    for (;;) {
        unread = r->buf.len - r->start;
        if (unread >= 4) {
            flen = frame_length(r->buf.data + r->start);
            if (flen == 0 || flen > max)
                return rs_fail(err, "a message of %u bytes (the limit is %zu)", flen, max);
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
    rs_error ignored;

    rs_bytes_free(&r->buf);
    if (r->charge)
        r->charge(r->charge_ctx, 0, &ignored);
    r->start = 0;
    while (r->n_fds)
        close(r->fds[--r->n_fds]);
}

#include "service/proto.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "crypto/ossl.h"

static int send_all(int fd, const void *data, size_t len, rs_error *err)
{
    const uint8_t *p = data;

    while (len) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return rs_fail(err, "send: %s", strerror(errno));
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* 0: all read; 1: EOF before the first byte. */
static int recv_all(int fd, void *data, size_t len, rs_error *err)
{
    uint8_t *p = data;
    size_t got = 0;

    while (got < len) {
        ssize_t n = recv(fd, p + got, len - got, 0);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return rs_fail(err, "recv: %s", errno == EAGAIN ? "timed out" : strerror(errno));
        if (n == 0)
            return got == 0 ? 1 : rs_fail(err, "the connection closed in the middle of a message");
        got += (size_t)n;
    }
    return 0;
}

int rs_frame_write(int fd, const char *data, size_t len, rs_error *err)
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
    return send_all(fd, frame, len + 4, err);
}

int rs_frame_read(int fd, rs_bytes *out, bool *eof, rs_error *err)
{
    uint8_t hdr[4];
    uint32_t len;
    int rc;

    *eof = false;
    rs_bytes_free(out);
    if ((rc = recv_all(fd, hdr, 4, err)) != 0) {
        *eof = rc == 1;
        return rc < 0 ? -1 : 0;
    }
    len = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
    if (len == 0 || len > RS_PROTO_MAX_FRAME)
        return rs_fail(err, "a message of %u bytes (the limit is %d)", len, RS_PROTO_MAX_FRAME);
    if (!(out->data = malloc(len + 1)))
        return rs_fail(err, "out of memory");
    out->cap = len + 1;
    if ((rc = recv_all(fd, out->data, len, err)) != 0)
        return rc < 0 ? -1 : rs_fail(err, "the connection closed in the middle of a message");
    out->len = len;
    out->data[len] = '\0';
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

static int decode_signature(const char *b64, rs_bytes *sig, rs_error *err)
{
    if (!b64 || !*b64)
        return rs_fail(err, "the service sent no signature");
    if (rs_base64_decode(b64, 12288, sig, err) < 0)
        return rs_fail(err, "the service sent a signature that is not base64");
    return 0;
}

static int read_answer(int fd, rs_bytes *sig, uint64_t *log_index, bool *refused, rs_error *err)
{
    _cleanup_bytes_ rs_bytes frame = { 0 };
    json_auto_t *doc = NULL;
    bool eof;

    if (rs_frame_read(fd, &frame, &eof, err) < 0)
        return -1;
    if (eof)
        return rs_fail(err, "the service closed the connection without an answer");
    doc = json_loadb((const char *)frame.data, frame.len, JSON_REJECT_DUPLICATES, NULL);
    if (!json_is_object(doc))
        return rs_fail(err, "the service sent an answer that is not JSON");
    if (!json_is_true(json_object_get(doc, "ok"))) {
        const char *why = json_string_value(json_object_get(doc, "error"));

        *refused = true;
        return rs_fail(err, "%s", why ? why : "refused, with no reason given");
    }
    if (log_index)
        *log_index = (uint64_t)json_integer_value(json_object_get(doc, "log_index"));
    return decode_signature(json_string_value(json_object_get(doc, "signature")), sig, err);
}

int rs_client_sign(int fd, const rs_offline_request *r, rs_bytes *sig, uint64_t *log_index, rs_error *err)
{
    _cleanup_free_ char *json = NULL;
    bool refused = false;
    rs_error send_err;

    if (rs_offline_request_write(r, &json, err) < 0)
        return -1;
    if (rs_frame_write(fd, json, strlen(json), &send_err) == 0)
        return read_answer(fd, sig, log_index, &refused, err);
    /* A refused client is told why before the service closes: that
     * answer says more than the failed send. */
    if (read_answer(fd, sig, log_index, &refused, err) < 0 && !refused)
        *err = send_err;
    return -1;
}

int rs_sign_via(const char *path, const rs_offline_request *r, rs_bytes *sig, rs_error *err)
{
    _cleanup_close_ int fd = -1;

    if (rs_client_connect(path, &fd, err) < 0 || rs_client_sign(fd, r, sig, NULL, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

/* The service's answers and the client side of the build-time socket
 * (proto.h). */
#include "service/proto.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "crypto/ossl.h"

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

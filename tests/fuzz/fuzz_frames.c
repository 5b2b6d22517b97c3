/* The signing socket's frame reader: whatever a client writes, read
 * through a real socket until the client's end closes. Every frame it
 * returns must lie within the bytes that were sent, in order and whole
 * (length prefix, then body), and the walk must end in end-of-stream or
 * one error, never loop. Each frame is also read as an answer, as a client
 * reads what comes back: a value, or one error with its reason.
 *
 * Each frame then goes to the socket's policy (service/socket_policy.h)
 * with two stand-in keys, an EFI one and a module one, that record what
 * they are asked to sign. A key may be reached only through the checks:
 * the key of the request's sig_type, holding the request's certificate,
 * over the digest the service itself rebuilt from the image digest, and,
 * for a module, only with the module's own bytes attached and sealed.
 *
 * The reader is the service's: requests of at most RS_PROTO_MAX_REQUEST,
 * its buffer counted against a budget (bit 2 of the flags: 8 KiB, else
 * none) that must always hold exactly what the buffer does, and given
 * back after each frame.
 *
 * Input: a flags byte (bit 0: attach an image, sealed; bit 1: unsealed),
 * then, when attaching, a 2-byte big-endian length and that many bytes of
 * the image; the rest is what the client writes to the socket. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz_keys.h"
#include "pipeline/files_json.h"
#include "service/proto.h"
#include "service/socket_policy.h"

static void bug(const char *what)
{
    (void)!write(2, what, strlen(what));
    abort();
}

static void read_as_answer(const char *msg, size_t len)
{
    rs_bytes sig = { 0 };
    uint64_t index;
    bool refused;
    rs_error err = { 0 };

    if (rs_answer_read(msg, len, &sig, &index, &refused, &err) < 0 ? !err.msg[0] || sig.len : !sig.len || refused)
        bug("an answer read without a value or without a reason\n");
    rs_bytes_free(&sig);
}

/* A key that records, and signs nothing. */
typedef struct stand_in {
    rs_signer base;
    int calls;
    rs_digest asked;
} stand_in;

static int stand_in_sign(rs_signer *s, const EVP_MD *md, const uint8_t *digest, size_t len, rs_bytes *sig,
                         rs_error *err)
{
    stand_in *k = (stand_in *)s;

    k->calls++;
    k->asked = (rs_digest){ .md = md, .len = (unsigned)len };
    memcpy(k->asked.bytes, digest, len < sizeof(k->asked.bytes) ? len : sizeof(k->asked.bytes));
    return rs_bytes_set(sig, "value", 5, err);
}

static void stand_in_destroy(rs_signer *s)
{
    (void)s;
}

static const rs_signer_ops stand_in_ops = { .sign_digest = stand_in_sign, .destroy = stand_in_destroy };

static stand_in keys[2];
static rs_signer *signers[2];
static rs_socket_keys policy;

static void set_up(void)
{
    rs_error err;

    for (int t = 0; t < 2; t++) {
        keys[t].base.ops = &stand_in_ops;
        if (rs_signer_init_base(&keys[t].base, fuzz_cert_from(t == SIG_EFI ? fuzz_cert_pem : fuzz_module_cert_pem), &err) < 0)
            fuzz_die("stand-in key", err.msg);
        signers[t] = &keys[t].base;
    }
    if (rs_socket_keys_init(&policy, signers, 2, &err) < 0)
        fuzz_die("policy", err.msg);
}

/* The module digest of the attached bytes, when they are a module. */
static bool attached_digest(const uint8_t *image, size_t len, const EVP_MD *md, rs_digest *d)
{
    rs_image img;
    rs_error err;
    char path[64];
    int fd = fuzz_memfd("attached", path, sizeof(path));
    bool ok;

    fuzz_memfd_fill(fd, image, len);
    ok = rs_image_open_fd(&img, fd, "attached", &err) == 0;
    ok = ok && img.format->key_signs_image_digest && img.format->digest(&img, md, d, &err) == 0;
    if (ok || img.format)
        rs_image_close(&img);
    return ok;
}

/* The policy's verdict on one frame, checked against what the keys saw. */
static void judge(rs_frame_reader *rd, const char *msg, size_t len, const uint8_t *image, size_t image_len,
                  bool sealed)
{
    rs_offline_request r = { 0 }, rebuilt;
    rs_bytes sig = { 0 };
    rs_error err;
    size_t key = 9;
    rs_digest d;
    int before = keys[0].calls + keys[1].calls;
    char shown[256];   /* msg is not NUL-terminated */

    snprintf(shown, sizeof(shown), "%.*s", (int)(len < 200 ? len : 200), msg);
    if (rs_socket_sign(&policy, rd, msg, len, &r, &key, &sig, &err) < 0) {
        if (keys[0].calls + keys[1].calls != before)
            fuzz_bug("a refused request reached a key", err.msg);
        return;
    }
    if (keys[0].calls + keys[1].calls != before + 1 || keys[key].calls == 0)
        fuzz_bug("a signed request did not reach exactly one key", shown);
    if (strcmp(r.format->sig_type, rs_sig_type_name((rs_sig_type)key)) || X509_cmp(signers[key]->cert, r.cert))
        fuzz_bug("a key signed outside its purpose", shown);
    if (rs_offline_prepare_digest(r.format, &r.image_digest, r.cert, NULL, &r.opts, &rebuilt, &err) < 0 ||
        !rs_digest_equal(&rebuilt.tbs, &keys[key].asked))
        fuzz_bug("a key signed a digest the service did not rebuild", shown);
    if (r.format->key_signs_image_digest &&
        (!image || !sealed || !attached_digest(image, image_len, r.opts.md, &d) || !rs_digest_equal(&d, &r.image_digest)))
        fuzz_bug("a module key signed without the module's own sealed bytes", shown);
    rs_offline_request_free(&rebuilt);
    rs_offline_request_free(&r);
    rs_bytes_free(&sig);
}

/* The service's count of a connection's buffer (server_charge). */
typedef struct budget {
    size_t limit, held;
} budget;

static int charge(void *ctx, size_t cap, rs_error *err)
{
    budget *b = ctx;

    if (cap > b->held && cap > b->limit)
        return rs_fail(err, "over the budget");
    b->held = cap;
    return 0;
}

/* The image the client attaches: a sealed memfd, or a plain one. */
static int attach_fd(const uint8_t *image, size_t len, bool sealed)
{
    int fd = memfd_create("image", MFD_CLOEXEC | MFD_ALLOW_SEALING);

    if (fd < 0)
        fuzz_die("memfd_create", NULL);
    fuzz_memfd_fill(fd, image, len);
    if (sealed && fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
        fuzz_die("seal", NULL);
    return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rs_frame_reader rd;
    budget b = { .limit = SIZE_MAX };
    size_t offset = 0, image_len = 0;
    const uint8_t *image = NULL;
    bool sealed = true;
    int sv[2], fd = -1;

    if (!policy.fingerprints)
        set_up();
    if (size < 1)
        return 0;
    if (data[0] & 4)
        b.limit = 8192;
    if (data[0] & 1) {
        if (size < 3 || (image_len = (size_t)data[1] << 8 | data[2]) > size - 3)
            return 0;
        image = data + 3;
        sealed = !(data[0] & 2);
        data += 3 + image_len;
        size -= 3 + image_len;
    } else {
        data++;
        size--;
    }

    /* Inputs stay far below a socket buffer, so one send takes them all. */
    if (size > 16384 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        return 0;
    if (image && size)
        fd = attach_fd(image, image_len, sealed);
    /* The client's bytes, with the image's descriptor on the first of them. */
    if (size && rs_send_with_fd(sv[1], data, size, fd) != (ssize_t)size)
        bug("fuzz set-up: short send\n");
    if (fd >= 0)
        close(fd);
    close(sv[1]);
    rd = (rs_frame_reader){ .fd = sv[0], .max_frame = RS_PROTO_MAX_REQUEST, .charge = charge, .charge_ctx = &b };
    for (;;) {
        const char *msg;
        size_t len;
        bool eof;
        rs_error err;

        int rc = rs_frame_next(&rd, &msg, &len, &eof, &err);

        if (b.held != rd.buf.cap || b.held > (b.limit > 8192 ? 4 + RS_PROTO_MAX_REQUEST : b.limit))
            bug("the budget does not hold what the buffer does\n");
        if (rc < 0) {
            if (!err.msg[0])
                bug("a refused frame without a reason\n");
            break;
        }
        if (eof) {
            if (offset != size)
                bug("end of stream before the last byte sent\n");
            break;
        }
        if (len == 0 || len > RS_PROTO_MAX_REQUEST || offset + 4 + len > size ||
            ((size_t)data[offset] << 24 | (size_t)data[offset + 1] << 16 | (size_t)data[offset + 2] << 8 |
             data[offset + 3]) != len ||
            memcmp(msg, data + offset + 4, len) != 0)
            bug("a frame that is not the bytes sent\n");
        offset += 4 + len;
        read_as_answer(msg, len);
        judge(&rd, msg, len, image, image_len, sealed);
        rs_frame_release(&rd);
        if (b.held != rd.buf.cap)
            bug("a released buffer not given back to the budget\n");
    }
    close(sv[0]);
    rs_frame_reader_free(&rd);
    if (b.held != 0)
        bug("a freed reader still counted\n");
    return 0;
}

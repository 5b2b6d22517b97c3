/* service/proto_frame.c, the socket's framing, over real socketpairs:
 * frames that arrive together, one byte at a time, or larger than its
 * first read; a frame of exactly the limit; a peer that closes between
 * frames or inside one (a truncated frame); lengths that are zero or over
 * the limit (up to 2^32-1); the writer's own limit; descriptors carried
 * along, and too many of them; the service's own limit and the count of
 * its buffers (#46). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"
#include "service/proto.h"

static void put_frame(rs_bytes *b, const char *body, size_t len)
{
    uint8_t h[4] = { (uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len };

    if (rs_bytes_append(b, h, 4, NULL) < 0 || rs_bytes_append(b, body, len, NULL) < 0)
        abort();
}

/* Sends `wire` on one end, `step` bytes per send (0: all at once), closes
 * it, and returns the other end. A child does the sending so a large wire
 * cannot fill the socket buffer and block. */
static int feed(const rs_bytes *wire, size_t step)
{
    int sv[2];
    pid_t pid;

    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 || (pid = fork()) < 0)
        abort();
    if (pid == 0) {
        close(sv[0]);
        for (size_t off = 0; off < wire->len;) {
            size_t n = step && step < wire->len - off ? step : wire->len - off;
            ssize_t w = send(sv[1], wire->data + off, n, 0);

            if (w <= 0)
                _exit(1);
            off += (size_t)w;
        }
        _exit(0);
    }
    close(sv[1]);
    return sv[0];
}

static void frames_arrive_whole(size_t step)
{
    rs_bytes wire = { 0 }, big = { 0 };
    rs_frame_reader rd;
    const char *msg;
    size_t len;
    bool eof;
    rs_error err;

    for (size_t i = 0; i < 10000; i++)
        if (rs_bytes_append(&big, &"0123456789"[i % 10], 1, NULL) < 0)
            abort();
    put_frame(&wire, "{\"a\":1}", 7);
    put_frame(&wire, (const char *)big.data, big.len);
    put_frame(&wire, "x", 1);
    rd = (rs_frame_reader){ .fd = feed(&wire, step) };
    CHECK(rs_frame_next(&rd, &msg, &len, &eof, &err) == 0 && !eof && len == 7 && !memcmp(msg, "{\"a\":1}", 7));
    CHECK(rs_frame_next(&rd, &msg, &len, &eof, &err) == 0 && !eof && len == big.len &&
          !memcmp(msg, big.data, big.len));
    CHECK(rs_frame_next(&rd, &msg, &len, &eof, &err) == 0 && !eof && len == 1 && msg[0] == 'x');
    CHECK(rs_frame_pending(&rd) == 0);
    CHECK(rs_frame_next(&rd, &msg, &len, &eof, &err) == 0 && eof);
    close(rd.fd);
    rs_frame_reader_free(&rd);
    rs_bytes_free(&wire);
    rs_bytes_free(&big);
}

static void refused(const char *name, const uint8_t *bytes, size_t n, const char *says)
{
    rs_bytes wire = { 0 };
    rs_frame_reader rd;
    const char *msg;
    size_t len;
    bool eof = true;
    rs_error err = { 0 };

    if (rs_bytes_append(&wire, bytes, n, NULL) < 0)
        abort();
    rd = (rs_frame_reader){ .fd = feed(&wire, 0) };
    if (rs_frame_next(&rd, &msg, &len, &eof, &err) != -1 || eof || !strstr(err.msg, says)) {
        fprintf(stderr, "%s: got \"%s\"\n", name, err.msg);
        CHECK(!"refused");
    }
    close(rd.fd);
    rs_frame_reader_free(&rd);
    rs_bytes_free(&wire);
}

/* A frame of exactly the limit is read; the writer refuses one over it
 * before sending anything. */
static void frame_at_the_limit(void)
{
    rs_bytes wire = { 0 };
    char *body = malloc(RS_PROTO_MAX_FRAME + 1);
    rs_frame_reader rd;
    const char *msg;
    size_t len;
    bool eof;
    rs_error err = { 0 };
    int sv[2];

    if (!body)
        abort();
    memset(body, 'b', RS_PROTO_MAX_FRAME + 1);
    put_frame(&wire, body, RS_PROTO_MAX_FRAME);
    rd = (rs_frame_reader){ .fd = feed(&wire, 0) };
    CHECK(rs_frame_next(&rd, &msg, &len, &eof, &err) == 0 && !eof && len == RS_PROTO_MAX_FRAME && msg[len - 1] == 'b');
    CHECK(rs_frame_next(&rd, &msg, &len, &eof, &err) == 0 && eof);
    close(rd.fd);
    rs_frame_reader_free(&rd);
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        abort();
    CHECK(rs_frame_write(sv[0], body, RS_PROTO_MAX_FRAME + 1, &err) < 0 && strstr(err.msg, "message too large"));
    close(sv[0]);
    CHECK(recv(sv[1], body, 1, MSG_DONTWAIT) == 0);   /* nothing was sent, only the close */
    close(sv[1]);
    free(body);
    rs_bytes_free(&wire);
}

/* A counter standing in for the service's share of a uid (#46): it
 * admits buffers up to `limit` bytes and remembers the largest. */
typedef struct budget {
    size_t limit, held, peak, calls;
} budget;

static int charge(void *ctx, size_t cap, rs_error *err)
{
    budget *b = ctx;

    b->calls++;
    if (cap > b->limit)
        return rs_fail(err, "over budget: %zu", cap);
    b->held = cap;
    b->peak = cap > b->peak ? cap : b->peak;
    return 0;
}

/* The service's reader (max_frame RS_PROTO_MAX_REQUEST, a charge): a
 * request of exactly its limit is read, with the buffer counted before it
 * grows and given back by rs_frame_release; one byte more is refused
 * before any of it is read; a growth the count refuses fails the frame,
 * and the buffer stays as it was. */
static void frames_the_service_reads(void)
{
    rs_bytes wire = { 0 };
    char *body = malloc(RS_PROTO_MAX_REQUEST + 1);
    budget b = { .limit = RS_PROTO_MAX_REQUEST + 4 };
    rs_frame_reader rd;
    const char *msg;
    size_t len;
    bool eof;
    rs_error err = { 0 };

    if (!body)
        abort();
    memset(body, 'r', RS_PROTO_MAX_REQUEST + 1);
    put_frame(&wire, body, RS_PROTO_MAX_REQUEST);
    put_frame(&wire, "{}", 2);
    rd = (rs_frame_reader){ .fd = feed(&wire, 0), .max_frame = RS_PROTO_MAX_REQUEST, .charge = charge,
                            .charge_ctx = &b };
    CHECK(rs_frame_next(&rd, &msg, &len, &eof, &err) == 0 && !eof && len == RS_PROTO_MAX_REQUEST);
    CHECK(b.peak == RS_PROTO_MAX_REQUEST + 4 && b.held == rd.buf.cap);
    rs_frame_release(&rd);
    CHECK(b.held == rd.buf.cap && b.held < 8192);
    CHECK(rs_frame_next(&rd, &msg, &len, &eof, &err) == 0 && !eof && len == 2 && memcmp(msg, "{}", 2) == 0);
    close(rd.fd);
    rs_frame_reader_free(&rd);
    CHECK(b.held == 0);

    wire.len = 0;
    put_frame(&wire, body, RS_PROTO_MAX_REQUEST + 1);
    b = (budget){ .limit = SIZE_MAX };
    rd = (rs_frame_reader){ .fd = feed(&wire, 0), .max_frame = RS_PROTO_MAX_REQUEST, .charge = charge,
                            .charge_ctx = &b };
    CHECK(rs_frame_next(&rd, &msg, &len, &eof, &err) < 0 && strstr(err.msg, "a message of 65537 bytes (the limit is 65536)"));
    CHECK(b.peak < 8192);
    close(rd.fd);
    rs_frame_reader_free(&rd);

    wire.len = 0;
    put_frame(&wire, body, RS_PROTO_MAX_REQUEST);
    b = (budget){ .limit = RS_PROTO_MAX_REQUEST };
    rd = (rs_frame_reader){ .fd = feed(&wire, 0), .max_frame = RS_PROTO_MAX_REQUEST, .charge = charge,
                            .charge_ctx = &b };
    CHECK(rs_frame_next(&rd, &msg, &len, &eof, &err) < 0 && strstr(err.msg, "over budget: 65540"));
    CHECK(rd.buf.cap == b.held && b.held < 8192);
    close(rd.fd);
    rs_frame_reader_free(&rd);
    free(body);
    rs_bytes_free(&wire);
}

/* What rs_frame_write sends, rs_frame_next reads, descriptors in order. */
static void written_frames_and_descriptors(void)
{
    rs_frame_reader rd;
    const char *msg;
    size_t len;
    bool eof;
    rs_error err = { 0 };
    int sv[2], a[2], fd;
    char c;

    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 || pipe(a) < 0)
        abort();
    CHECK(rs_frame_write_fd(sv[0], "one", 3, a[0], &err) == 0 && rs_frame_write(sv[0], "two", 3, &err) == 0);
    close(sv[0]);
    rd = (rs_frame_reader){ .fd = sv[1] };
    CHECK(rs_frame_next(&rd, &msg, &len, &eof, &err) == 0 && len == 3 && !memcmp(msg, "one", 3));
    CHECK((fd = rs_frame_take_fd(&rd)) >= 0 && rs_frame_take_fd(&rd) == -1);
    CHECK(write(a[1], "!", 1) == 1 && fd >= 0 && read(fd, &c, 1) == 1 && c == '!');
    CHECK(rs_frame_next(&rd, &msg, &len, &eof, &err) == 0 && len == 3 && !memcmp(msg, "two", 3));
    CHECK(rs_frame_next(&rd, &msg, &len, &eof, &err) == 0 && eof);
    if (fd >= 0)
        close(fd);
    close(a[0]);
    close(a[1]);
    close(sv[1]);
    rs_frame_reader_free(&rd);
}

/* Descriptors sent ahead of their requests are bounded: one past the
 * limit closes the connection, and those kept are closed with the reader. */
static void too_many_descriptors(void)
{
    rs_frame_reader rd;
    const char *msg;
    size_t len;
    bool eof;
    rs_error err = { 0 };
    int sv[2], p[2], rc = 0;

    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 || pipe(p) < 0)
        abort();
    /* One frame, a byte and a descriptor per send: the reader takes each
     * send's descriptors as it reads the frame. */
    uint8_t frame[4 + RS_PROTO_MAX_FDS] = { 0, 0, 0, RS_PROTO_MAX_FDS };

    for (int i = 0; i <= RS_PROTO_MAX_FDS; i++)
        CHECK(rs_send_with_fd(sv[0], &frame[i], 1, p[0]) == 1);
    close(sv[0]);
    rd = (rs_frame_reader){ .fd = sv[1] };
    rc = rs_frame_next(&rd, &msg, &len, &eof, &err);
    CHECK(rc < 0 && strstr(err.msg, "descriptors sent ahead of their requests"));
    CHECK(rd.n_fds <= RS_PROTO_MAX_FDS);
    rs_frame_reader_free(&rd);
    CHECK(rd.n_fds == 0);
    close(p[0]);
    close(p[1]);
    close(sv[1]);
}

int main(void)
{
    static const uint8_t zero[] = { 0, 0, 0, 0 }, huge[] = { 0, 0x10, 0, 1, 'x' }, cut[] = { 0, 0, 0, 9, 'a', 'b' },
                         half_header[] = { 0, 0 }, all_ones[] = { 0xff, 0xff, 0xff, 0xff, 'x' };

    frames_arrive_whole(0);
    frames_arrive_whole(1);
    frames_arrive_whole(4099);
    frame_at_the_limit();
    frames_the_service_reads();
    written_frames_and_descriptors();
    too_many_descriptors();
    refused("zero length", zero, sizeof(zero), "a message of 0 bytes");
    refused("over the limit", huge, sizeof(huge), "a message of 1048577 bytes");
    refused("the largest length", all_ones, sizeof(all_ones), "a message of 4294967295 bytes");
    refused("closed inside the body", cut, sizeof(cut), "closed in the middle of a message");
    refused("closed inside the length", half_header, sizeof(half_header), "closed in the middle of a message");
    return harness_finish("test_proto_frame");
}

/* The socket's frame reader over a real socketpair: frames that arrive
 * together, one byte at a time, or larger than its first read; a peer that
 * closes between frames or inside one; lengths that are zero or over the
 * limit. Then the answers: what the service writes reads back, and what
 * is not an answer is refused with a reason. */
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

static void answers_round_trip(void)
{
    uint8_t value[256];
    rs_bytes sig = { .data = value, .len = sizeof(value) }, back = { 0 };
    uint64_t index = 0;
    bool refused = true;
    rs_error err = { 0 };
    char *text;

    for (size_t i = 0; i < sizeof(value); i++)
        value[i] = (uint8_t)(i * 7 + 1);
    CHECK((text = rs_answer_signed(&sig, 123456789012ULL)) != NULL);
    CHECK(text && rs_answer_read(text, strlen(text), &back, &index, &refused, &err) == 0);
    CHECK(!refused && index == 123456789012ULL && back.len == sizeof(value) && !memcmp(back.data, value, back.len));
    free(text);
    rs_bytes_free(&back);

    CHECK((text = rs_answer_refused("uid 7 is not \"allowed\"")) != NULL);
    CHECK(text && rs_answer_read(text, strlen(text), &back, NULL, &refused, &err) == -1);
    CHECK(refused && !strcmp(err.msg, "uid 7 is not \"allowed\"") && back.len == 0);
    free(text);
}

static void not_an_answer(const char *text, bool is_refusal, const char *says)
{
    rs_bytes sig = { 0 };
    bool refused = !is_refusal;
    rs_error err = { 0 };

    if (rs_answer_read(text, strlen(text), &sig, NULL, &refused, &err) != -1 || refused != is_refusal ||
        !strstr(err.msg, says)) {
        fprintf(stderr, "%s: got \"%s\"\n", text, err.msg);
        CHECK(!"not an answer");
    }
    CHECK(sig.len == 0);
    rs_bytes_free(&sig);
}

/* A client waits a bounded time for an answer: the timeout is set when it
 * connects, and running out of it is an error, not a hang. Shortened here
 * to a tenth of a second on a socket that never answers. */
static void client_gives_up(void)
{
    char dir[] = "/tmp/rs-proto-XXXXXX";
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    struct timeval tv = { 0 }, short_wait = { .tv_usec = 100000 };
    socklen_t tvlen = sizeof(tv);
    rs_client c;
    const char *msg;
    size_t len;
    bool eof;
    rs_error err = { 0 };
    int listener;

    if (!mkdtemp(dir))
        abort();
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/s", dir);
    if ((listener = socket(AF_UNIX, SOCK_STREAM, 0)) < 0 || bind(listener, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
        listen(listener, 1) < 0)
        abort();
    CHECK(rs_client_open(addr.sun_path, &c, &err) == 0);
    CHECK(getsockopt(c.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &tvlen) == 0 && tv.tv_sec == RS_PROTO_ANSWER_TIMEOUT_S);
    CHECK(setsockopt(c.fd, SOL_SOCKET, SO_RCVTIMEO, &short_wait, sizeof(short_wait)) == 0);
    CHECK(rs_frame_next(&c.rd, &msg, &len, &eof, &err) < 0 && strstr(err.msg, "timed out"));
    rs_client_close(&c);
    close(listener);
    unlink(addr.sun_path);
    rmdir(dir);
}

int main(void)
{
    static const uint8_t zero[] = { 0, 0, 0, 0 }, huge[] = { 0, 0x10, 0, 1, 'x' }, cut[] = { 0, 0, 0, 9, 'a', 'b' },
                         half_header[] = { 0, 0 };

    frames_arrive_whole(0);
    frames_arrive_whole(1);
    frames_arrive_whole(4099);
    refused("zero length", zero, sizeof(zero), "a message of 0 bytes");
    refused("over the limit", huge, sizeof(huge), "a message of 1048577 bytes");
    refused("closed inside the body", cut, sizeof(cut), "closed in the middle of a message");
    refused("closed inside the length", half_header, sizeof(half_header), "closed in the middle of a message");
    answers_round_trip();
    not_an_answer("", false, "not JSON");
    not_an_answer("[1]", false, "not JSON");
    not_an_answer("{\"ok\":true}", false, "no signature");
    not_an_answer("{\"ok\":true,\"signature\":\"\"}", false, "no signature");
    not_an_answer("{\"ok\":true,\"signature\":\"%%%\"}", false, "not base64");
    not_an_answer("{\"ok\":true,\"ok\":true,\"signature\":\"AAAA\"}", false, "not JSON");
    not_an_answer("{\"ok\":false}", true, "refused, with no reason given");
    not_an_answer("{\"ok\":false,\"error\":\"\"}", true, "refused, with no reason given");
    not_an_answer("{\"ok\":1,\"signature\":\"AAAA\"}", true, "refused, with no reason given");
    client_gives_up();
    return harness_finish("test_proto");
}

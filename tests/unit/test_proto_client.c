/* service/proto_client.c: what the service writes as an answer reads
 * back, what is not an answer is refused with a reason, and a client
 * gives up on a service that never answers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"
#include "service/proto.h"

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
    return harness_finish("test_proto_client");
}

/* The signing socket's frame reader: whatever a client writes, read
 * through a real socket until the client's end closes. Every frame it
 * returns must lie within the bytes that were sent, in order and whole
 * (length prefix, then body), and the walk must end in end-of-stream or
 * one error, never loop. Each frame is also read as an answer, as a client
 * reads what comes back: a value, or one error with its reason. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "service/proto.h"

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
    rs_error err = { "" };

    if (rs_answer_read(msg, len, &sig, &index, &refused, &err) < 0 ? !err.msg[0] || sig.len : !sig.len || refused)
        bug("an answer read without a value or without a reason\n");
    rs_bytes_free(&sig);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rs_frame_reader rd;
    size_t offset = 0;
    int sv[2];

    /* Inputs stay far below a socket buffer, so one send takes them all. */
    if (size > 16384 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        return 0;
    if (size && send(sv[1], data, size, 0) != (ssize_t)size)
        bug("fuzz set-up: short send\n");
    close(sv[1]);
    rd = (rs_frame_reader){ .fd = sv[0] };
    for (;;) {
        const char *msg;
        size_t len;
        bool eof;
        rs_error err;

        if (rs_frame_next(&rd, &msg, &len, &eof, &err) < 0) {
            if (!err.msg[0])
                bug("a refused frame without a reason\n");
            break;
        }
        if (eof) {
            if (offset != size)
                bug("end of stream before the last byte sent\n");
            break;
        }
        if (len == 0 || len > RS_PROTO_MAX_FRAME || offset + 4 + len > size ||
            ((size_t)data[offset] << 24 | (size_t)data[offset + 1] << 16 | (size_t)data[offset + 2] << 8 |
             data[offset + 3]) != len ||
            memcmp(msg, data + offset + 4, len) != 0)
            bug("a frame that is not the bytes sent\n");
        offset += 4 + len;
        read_as_answer(msg, len);
    }
    close(sv[0]);
    rs_frame_reader_free(&rd);
    return 0;
}

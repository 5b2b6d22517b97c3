#include "base/bytes.h"

#include <stdlib.h>
#include <string.h>

void rs_bytes_free(rs_bytes *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

int rs_bytes_reserve(rs_bytes *b, size_t extra, rs_error *err)
{
    size_t want, cap;
    uint8_t *p;

    if (extra > SIZE_MAX - b->len)
        return rs_fail(err, "buffer size overflow");
    want = b->len + extra;
    if (want <= b->cap)
        return 0;
    cap = b->cap ? b->cap : 256;
    while (cap < want)
        cap = cap > SIZE_MAX / 2 ? want : cap * 2;
    p = realloc(b->data, cap);
    if (!p)
        return rs_fail(err, "out of memory");
    b->data = p;
    b->cap = cap;
    return 0;
}

int rs_bytes_append(rs_bytes *b, const void *data, size_t len, rs_error *err)
{
    if (len == 0)
        return 0;
    if (rs_bytes_reserve(b, len, err) < 0)
        return -1;
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return 0;
}

int rs_bytes_set(rs_bytes *b, const void *data, size_t len, rs_error *err)
{
    b->len = 0;
    return rs_bytes_append(b, data, len, err);
}

void rs_bytes_adopt(rs_bytes *b, uint8_t *data, size_t len)
{
    rs_bytes_free(b);
    b->data = data;
    b->len = b->cap = len;
}

void rs_hex(const uint8_t *data, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[data[i] >> 4];
        out[2 * i + 1] = digits[data[i] & 15];
    }
    out[2 * len] = '\0';
}

int rs_hex_nibble(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int rs_unhex(const char *hex, uint8_t *out, size_t len)
{
    size_t n = 0;

    while (*hex && n < len) {
        int hi, lo;

        if (*hex == ':') {
            hex++;
            continue;
        }
        hi = rs_hex_nibble(hex[0]);
        lo = hi < 0 ? -1 : rs_hex_nibble(hex[1]);
        if (lo < 0)
            return -1;
        out[n++] = (uint8_t)(hi << 4 | lo);
        hex += 2;
    }
    return (n == len && *hex == '\0') ? 0 : -1;
}

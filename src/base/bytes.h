/* An owned, growable byte buffer. */
#ifndef RS_BYTES_H
#define RS_BYTES_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

typedef struct rs_bytes {
    uint8_t *data;
    size_t len;
    size_t cap;
} rs_bytes;

void rs_bytes_free(rs_bytes *b);
int rs_bytes_append(rs_bytes *b, const void *data, size_t len, rs_error *err);
/* Room for extra more bytes after len, without moving len. */
int rs_bytes_reserve(rs_bytes *b, size_t extra, rs_error *err);
int rs_bytes_set(rs_bytes *b, const void *data, size_t len, rs_error *err);
/* Takes ownership of malloc'ed memory. */
void rs_bytes_adopt(rs_bytes *b, uint8_t *data, size_t len);

#define _cleanup_bytes_ __attribute__((cleanup(rs_bytes_free)))

/* Lower-case hex of data into out, which must hold 2*len+1 bytes. */
void rs_hex(const uint8_t *data, size_t len, char *out);
/* The value of one hex digit, or -1. */
int rs_hex_nibble(char c);
/* Parses exactly `len` bytes of hex (case-insensitive, ':' separators allowed). */
int rs_unhex(const char *hex, uint8_t *out, size_t len);

#endif

/* A JSON document read as a stream, for documents whose length grows with
 * their input (files.json lists every module of a kernel): the caller
 * walks the objects and arrays it expects, member by member, and jansson
 * decodes each value it wants whole, one at a time. So the document is
 * held one value at a time, and still every byte is checked: jansson
 * decodes the values, and the punctuation between them is checked here to
 * RFC 8259's grammar. Duplicate keys are refused inside a decoded value;
 * in the objects it walks, the caller sees every key. */
#ifndef RS_JSON_STREAM_H
#define RS_JSON_STREAM_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"

/* Reads up to n bytes: how many, 0 at the end, -1 with err set. */
typedef ssize_t (*rs_json_read_fn)(void *ctx, void *buf, size_t n, rs_error *err);

typedef struct rs_json_stream {
    rs_json_read_fn read;
    void *ctx;
    char *buf;
    size_t cap, start, end;   /* buf[start..end) is read but not yet taken */
    size_t max_value;         /* the longest value decoded whole */
    uint64_t total, max_total;
    bool eof;
    int line;                 /* of buf[start], from 1 */
} rs_json_stream;

/* A stream over read(2) of *(int *)ctx. */
ssize_t rs_json_read_fd(void *ctx, void *buf, size_t n, rs_error *err);

/* Neither limit may be 0: max_value bounds the buffer, max_total the
 * whole document. */
void rs_json_stream_init(rs_json_stream *s, rs_json_read_fn read, void *ctx, size_t max_value, uint64_t max_total);
void rs_json_stream_free(rs_json_stream *s);

/* The next byte after any whitespace, not taken; EOF at the end. */
int rs_json_stream_peek(rs_json_stream *s, int *c, rs_error *err);
/* Decodes the next value whole (any type). */
int rs_json_stream_value(rs_json_stream *s, json_t **value, rs_error *err);
/* 1 with the '{' or '[' (open) of the next value taken; 0, taking nothing,
 * when the next value is not that kind. */
int rs_json_stream_enter(rs_json_stream *s, char open, rs_error *err);
/* In an object whose '{' was taken: 1 with the next member's key in *key
 * (the caller frees it) and the stream at its value; 0 once the '}' is
 * taken. *index counts the members, from 0. */
int rs_json_stream_member(rs_json_stream *s, size_t *index, char **key, rs_error *err);
/* In an array whose '[' was taken: 1 with the stream at the next element;
 * 0 once the ']' is taken. */
int rs_json_stream_element(rs_json_stream *s, size_t *index, rs_error *err);
/* Only whitespace is left. */
int rs_json_stream_end(rs_json_stream *s, rs_error *err);
/* "invalid JSON at line N: why", N where the stream stands. */
int rs_json_stream_fail(const rs_json_stream *s, rs_error *err, const char *why);

#endif

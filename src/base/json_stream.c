#include "base/json_stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The buffer starts small and doubles only for a value longer than it. */
#define FIRST_BUFFER (64 * 1024)

ssize_t rs_json_read_fd(void *ctx, void *buf, size_t n, rs_error *err)
{
    for (;;) {
        ssize_t got = read(*(int *)ctx, buf, n);

        if (got >= 0)
            return got;
        if (errno != EINTR)
            return rs_fail(err, "%s", strerror(errno));
    }
}

void rs_json_stream_init(rs_json_stream *s, rs_json_read_fn read, void *ctx, size_t max_value, uint64_t max_total)
{
    memset(s, 0, sizeof(*s));
    s->read = read;
    s->ctx = ctx;
    s->max_value = max_value;
    s->max_total = max_total;
    s->line = 1;
}

void rs_json_stream_free(rs_json_stream *s)
{
    free(s->buf);
    s->buf = NULL;
}

int rs_json_stream_fail(const rs_json_stream *s, rs_error *err, const char *why)
{
    return rs_fail(err, "invalid JSON at line %d: %s", s->line, why);
}

/* What was expected where c stands: at the end of the input, more. */
static int unexpected(const rs_json_stream *s, int c, rs_error *err, const char *why)
{
    return rs_json_stream_fail(s, err, c == EOF ? "premature end of input" : why);
}

/* Reads more after the bytes held: 1 when some came; 0 at the end of the
 * input, or when the bytes held already fill the largest buffer allowed. */
static int fill(rs_json_stream *s, rs_error *err)
{
    ssize_t got;

    if (s->eof)
        return 0;
    if (s->start) {
        memmove(s->buf, s->buf + s->start, s->end - s->start);
        s->end -= s->start;
        s->start = 0;
    }
    if (s->end == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : FIRST_BUFFER;
        char *n;

        if (s->cap >= s->max_value)
            return 0;
        if (cap > s->max_value)
            cap = s->max_value;
        if (!(n = realloc(s->buf, cap)))
            return rs_fail(err, "out of memory");
        s->buf = n;
        s->cap = cap;
    }
    if ((got = s->read(s->ctx, s->buf + s->end, s->cap - s->end, err)) < 0)
        return -1;
    if (got == 0) {
        s->eof = true;
        return 0;
    }
    s->total += (uint64_t)got;
    if (s->total > s->max_total)
        return rs_fail(err, "longer than the limit of %llu bytes", (unsigned long long)s->max_total);
    s->end += (size_t)got;
    return 1;
}

/* Reads until twice the bytes held are there (or the input ends, or the
 * buffer is at its largest), so that a long value is decoded again only a
 * logarithmic number of times, however short the reads: 1 when any came. */
static int fill_double(rs_json_stream *s, rs_error *err)
{
    size_t held = s->end - s->start, want = held < 64 ? 128 : held * 2;
    int rc;

    do
        rc = fill(s, err);
    while (rc > 0 && s->end - s->start < want);
    if (rc < 0)
        return -1;
    return s->end - s->start > held ? 1 : 0;
}

static void take(rs_json_stream *s, size_t n)
{
    for (const char *p = s->buf + s->start, *end = p + n; (p = memchr(p, '\n', (size_t)(end - p))); p++)
        s->line++;
    s->start += n;
}

int rs_json_stream_peek(rs_json_stream *s, int *c, rs_error *err)
{
    for (;;) {
        int rc;

        for (; s->start < s->end; s->start++) {
            char ch = s->buf[s->start];

            if (ch == '\n')
                s->line++;
            else if (ch != ' ' && ch != '\t' && ch != '\r') {
                *c = (unsigned char)ch;
                return 0;
            }
        }
        if ((rc = fill(s, err)) < 0)
            return -1;
        if (rc == 0) {
            *c = EOF;
            return 0;
        }
    }
}

/* Takes c, the next byte after any whitespace, or fails naming it. */
static int expect(rs_json_stream *s, char c, rs_error *err)
{
    char why[32];
    int next;

    if (rs_json_stream_peek(s, &next, err) < 0)
        return -1;
    if (next != (unsigned char)c) {
        snprintf(why, sizeof(why), "'%c' expected", c);
        return unexpected(s, next, err, why);
    }
    s->start++;
    return 0;
}

/* jansson's line counts from the value's first line. */
static int decode_error(const rs_json_stream *s, const json_error_t *je, rs_error *err)
{
    return rs_fail(err, "invalid JSON at line %d: %s", s->line + (je->line > 0 ? je->line - 1 : 0), je->text);
}

/* A value is taken only with a byte after it in the buffer, or at the end
 * of the input: "12" at the buffer's end may be the start of "123". A
 * value that fails to decode before the end may only be cut short, so it
 * is decoded again with more bytes, until the buffer is at its largest;
 * then a failure well inside it is the document's, and one at its end
 * means the value is too long. */
int rs_json_stream_value(rs_json_stream *s, json_t **value, rs_error *err)
{
    int c, rc;

    *value = NULL;
    if (rs_json_stream_peek(s, &c, err) < 0)
        return -1;
    if (c == EOF)
        return rs_json_stream_fail(s, err, "premature end of input");
    for (;;) {
        size_t avail = s->end - s->start;
        json_error_t je;
        json_t *v = json_loadb(s->buf + s->start, avail,
                               JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &je);

        if (v && ((size_t)je.position < avail || s->eof)) {
            take(s, (size_t)je.position);
            *value = v;
            return 0;
        }
        json_decref(v);
        if (!v && s->eof)
            return decode_error(s, &je, err);
        if ((rc = fill_double(s, err)) < 0)
            return -1;
        if (rc == 0 && !s->eof) {
            if (!v && (size_t)je.position + 8 < avail)
                return decode_error(s, &je, err);
            return rs_fail(err, "line %d: a value longer than the limit of %zu bytes", s->line, s->max_value);
        }
    }
}

/* In an object or an array: 0 once its closing byte is taken; else 1 with
 * the ',' before a later item taken and *c the item's first byte (a close
 * right after a ',' is left for the item's own check to refuse). */
static int next_item(rs_json_stream *s, size_t index, char close, int *c, rs_error *err)
{
    if (rs_json_stream_peek(s, c, err) < 0)
        return -1;
    if (*c == close) {
        s->start++;
        return 0;
    }
    if (index) {
        if (*c != ',')
            return unexpected(s, *c, err, close == '}' ? "',' or '}' expected" : "',' or ']' expected");
        s->start++;
        if (rs_json_stream_peek(s, c, err) < 0)
            return -1;
    }
    return 1;
}

int rs_json_stream_enter(rs_json_stream *s, char open, rs_error *err)
{
    int c;

    if (rs_json_stream_peek(s, &c, err) < 0)
        return -1;
    if (c != (unsigned char)open)
        return 0;
    s->start++;
    return 1;
}

int rs_json_stream_member(rs_json_stream *s, size_t *index, char **key, rs_error *err)
{
    json_t *k;
    int c, rc;

    *key = NULL;
    if ((rc = next_item(s, *index, '}', &c, err)) <= 0)
        return rc;
    if (c != '"')
        return unexpected(s, c, err, "string expected as an object key");
    if (rs_json_stream_value(s, &k, err) < 0)
        return -1;
    *key = strdup(json_string_value(k));
    json_decref(k);
    if (!*key)
        return rs_fail(err, "out of memory");
    if (expect(s, ':', err) < 0) {
        free(*key);
        *key = NULL;
        return -1;
    }
    (*index)++;
    return 1;
}

int rs_json_stream_element(rs_json_stream *s, size_t *index, rs_error *err)
{
    int c, rc;

    if ((rc = next_item(s, *index, ']', &c, err)) <= 0)
        return rc;
    (*index)++;
    return 1;
}

int rs_json_stream_end(rs_json_stream *s, rs_error *err)
{
    int c;

    if (rs_json_stream_peek(s, &c, err) < 0)
        return -1;
    return c == EOF ? 0 : rs_json_stream_fail(s, err, "end of file expected");
}

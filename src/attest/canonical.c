#include "attest/canonical.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"

static int put(rs_bytes *out, const char *s, size_t len, rs_error *err)
{
    return rs_bytes_append(out, s, len, err);
}

/* '"' and '\' get a backslash; every other byte, control characters and
 * UTF-8 included, is written as it is (securesystemslib's
 * _canonical_string_encoder). */
static int put_string(rs_bytes *out, const char *s, size_t len, rs_error *err)
{
    size_t run = 0;

    if (memchr(s, '\0', len))
        return rs_fail(err, "a string holds a NUL character, which canonical JSON cannot sign");
    if (put(out, "\"", 1, err) < 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '"' && s[i] != '\\')
            continue;
        if (put(out, s + run, i - run, err) < 0 || put(out, "\\", 1, err) < 0)
            return -1;
        run = i;
    }
    if (put(out, s + run, len - run, err) < 0)
        return -1;
    return put(out, "\"", 1, err);
}

static int compare_keys(const void *a, const void *b)
{
    /* strcmp compares bytes as unsigned char: for UTF-8 that is the order
     * of code points, which is how Python sorts the keys. */
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int encode(const json_t *v, rs_bytes *out, unsigned depth, rs_error *err);

static int encode_object(const json_t *v, rs_bytes *out, unsigned depth, rs_error *err)
{
    size_t n = json_object_size(v), i = 0;
    const char *key;
    json_t *value;

    if (n > SIZE_MAX / sizeof(char *))
        return rs_fail(err, "an object has too many members");
    _cleanup_free_ const char **keys = n ? malloc(n * sizeof(*keys)) : NULL;
    if (n && !keys)
        return rs_fail(err, "out of memory");
    /* Bounded by the size read above, so that every key taken is set. */
    json_object_foreach((json_t *)v, key, value) {
        if (i == n)
            break;
        keys[i++] = key;
    }
    n = i;
    if (n > 1)   /* qsort of no array at all is undefined */
        qsort(keys, n, sizeof(*keys), compare_keys);
    if (put(out, "{", 1, err) < 0)
        return -1;
    for (i = 0; i < n; i++) {
        if ((i && put(out, ",", 1, err) < 0) || put_string(out, keys[i], strlen(keys[i]), err) < 0 ||
            put(out, ":", 1, err) < 0 || encode(json_object_get(v, keys[i]), out, depth + 1, err) < 0)
            return -1;
    }
    return put(out, "}", 1, err);
}

static int encode_array(const json_t *v, rs_bytes *out, unsigned depth, rs_error *err)
{
    if (put(out, "[", 1, err) < 0)
        return -1;
    for (size_t i = 0; i < json_array_size(v); i++)
        if ((i && put(out, ",", 1, err) < 0) || encode(json_array_get(v, i), out, depth + 1, err) < 0)
            return -1;
    return put(out, "]", 1, err);
}

static int encode(const json_t *v, rs_bytes *out, unsigned depth, rs_error *err)
{
    char num[32];

    if (depth > RS_CANONICAL_MAX_DEPTH)
        return rs_fail(err, "nested deeper than %d levels", RS_CANONICAL_MAX_DEPTH);
    switch (json_typeof(v)) {
    case JSON_OBJECT: return encode_object(v, out, depth, err);
    case JSON_ARRAY: return encode_array(v, out, depth, err);
    case JSON_STRING: return put_string(out, json_string_value(v), json_string_length(v), err);
    case JSON_INTEGER:
        snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return put(out, num, strlen(num), err);
    case JSON_TRUE: return put(out, "true", 4, err);
    case JSON_FALSE: return put(out, "false", 5, err);
    case JSON_NULL: return put(out, "null", 4, err);
    case JSON_REAL: return rs_fail(err, "holds a real number, which canonical JSON cannot sign");
    }
    return rs_fail(err, "holds a JSON value of unknown type");
}

int rs_canonical_json(const json_t *v, rs_bytes *out, rs_error *err)
{
    return encode(v, out, 0, err);
}

#include "base/json_values.h"

#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/cleanup.h"
#include "base/iso_time.h"

json_t *rs_json_digest(const char *alg, const uint8_t *bytes, size_t len)
{
    size_t alg_len = alg ? strlen(alg) : 0;
    _cleanup_free_ char *text = NULL;

    if (!alg_len || !len || len > SIZE_MAX / 2 - alg_len - 2 || !(text = malloc(alg_len + 1 + 2 * len + 1)))
        return NULL;
    memcpy(text, alg, alg_len);
    text[alg_len] = ':';
    rs_hex(bytes, len, text + alg_len + 1);
    return json_string(text);
}

json_t *rs_json_digest_hex(const char *alg, const char *hex)
{
    size_t len = hex ? strlen(hex) : 0;

    if (!alg || !*alg || !len || len % 2 || strspn(hex, "0123456789abcdef") != len)
        return NULL;
    return json_sprintf("%s:%s", alg, hex);
}

json_t *rs_json_time(time_t t)
{
    char iso[RS_ISO_TIME_MAX];

    if (t < 0)
        return NULL;
    rs_iso_time(t, iso);
    return iso[0] ? json_string(iso) : NULL;
}

void rs_json_set(json_t *obj, const char *key, json_t *value)
{
    if (value)
        json_object_set_new(obj, key, value);
}

void rs_json_write_string(FILE *f, const char *s)
{
    static const char hexdigits[] = "0123456789ABCDEF", short_escapes[] = "\b\f\n\r\t";
    const char *short_form;

    putc('"', f);
    for (const char *run = s;; s++) {
        unsigned char c = (unsigned char)*s;

        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        fwrite(run, 1, (size_t)(s - run), f);
        if (!c)
            break;
        run = s + 1;
        putc('\\', f);
        if (c == '"' || c == '\\')
            putc(c, f);
        else if ((short_form = strchr(short_escapes, c)))
            putc("bfnrt"[short_form - short_escapes], f);
        else
            fprintf(f, "u00%c%c", hexdigits[c >> 4], hexdigits[c & 15]);
    }
    putc('"', f);
}

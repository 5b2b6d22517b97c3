#include "service/debversion.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define VERSION_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.+~:-"
/* Longer than any in Debian by far; a bound for the copies below. */
#define MAX_VERSION 256

typedef struct version {
    long epoch;
    char upstream[MAX_VERSION];
    const char *revision;   /* into upstream's buffer; "" when there is none */
} version;

/* As dpkg's parseversion(), with its errors (not its warnings). */
static int parse(const char *text, version *v, rs_error *err)
{
    const char *colon = strchr(text, ':'), *rest = colon ? colon + 1 : text;
    char *end, *hyphen;

    if (!*text || strlen(text) >= MAX_VERSION || strspn(text, VERSION_CHARS) != strlen(text))
        return rs_fail(err, "'%s' is not a Debian version", text);
    v->epoch = 0;
    if (colon) {
        if (colon == text || !isdigit((unsigned char)text[0]))
            return rs_fail(err, "'%s': its epoch is not a number", text);
        v->epoch = strtol(text, &end, 10);
        if (end != colon || v->epoch > INT_MAX)
            return rs_fail(err, "'%s': its epoch is not a number up to %d", text, INT_MAX);
    }
    memcpy(v->upstream, rest, strlen(rest) + 1);
    hyphen = strrchr(v->upstream, '-');
    v->revision = "";
    if (hyphen) {
        *hyphen = '\0';
        v->revision = hyphen + 1;
        if (!*v->revision)
            return rs_fail(err, "'%s': its revision is empty", text);
    }
    if (!v->upstream[0])
        return rs_fail(err, "'%s': its upstream version is empty", text);
    return 0;
}

/* dpkg's order of a non-digit: '~' before the end, the end before
 * letters, letters before the other characters. */
static int order(char c)
{
    if (isdigit((unsigned char)c) || !c)
        return 0;
    if (isalpha((unsigned char)c))
        return (unsigned char)c;
    return c == '~' ? -1 : (unsigned char)c + 256;
}

/* dpkg's verrevcmp(): non-digit runs by order(), digit runs as numbers. */
static int compare_part(const char *a, const char *b)
{
    while (*a || *b) {
        int first_diff = 0;

        while ((*a && !isdigit((unsigned char)*a)) || (*b && !isdigit((unsigned char)*b))) {
            int ac = order(*a), bc = order(*b);

            if (ac != bc)
                return ac - bc;
            a++, b++;
        }
        while (*a == '0')
            a++;
        while (*b == '0')
            b++;
        for (; isdigit((unsigned char)*a) && isdigit((unsigned char)*b); a++, b++)
            if (!first_diff)
                first_diff = *a - *b;
        if (isdigit((unsigned char)*a))
            return 1;
        if (isdigit((unsigned char)*b))
            return -1;
        if (first_diff)
            return first_diff;
    }
    return 0;
}

int rs_debversion_compare(const char *a, const char *b, int *cmp, rs_error *err)
{
    version va, vb;

    if (parse(a, &va, err) < 0 || parse(b, &vb, err) < 0)
        return -1;
    if (va.epoch != vb.epoch)
        *cmp = va.epoch < vb.epoch ? -1 : 1;
    else if ((*cmp = compare_part(va.upstream, vb.upstream)) == 0)
        *cmp = compare_part(va.revision, vb.revision);
    return 0;
}

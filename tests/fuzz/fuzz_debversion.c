/* Debian versions (service/debversion.h), as a template's
 * source-template/debian/changelog gives them and the state keeps them:
 * the input is two versions separated by a newline. Each is compared
 * with the other both ways and with itself: the order must be
 * antisymmetric and reflexive, and a refusal must name a version. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "service/debversion.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char buf[1024], *b;
    int ab = 0, ba = 0, aa = 1;
    rs_error err;

    if (size >= sizeof(buf) || memchr(data, '\0', size))
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    if (!(b = strchr(buf, '\n')))
        return 0;
    *b++ = '\0';
    if (rs_debversion_compare(buf, b, &ab, &err) < 0) {
        if (!strchr(err.msg, '\''))
            abort();
        return 0;
    }
    if (rs_debversion_compare(b, buf, &ba, &err) < 0 || rs_debversion_compare(buf, buf, &aa, &err) < 0)
        abort();
    if (aa != 0 || (ab > 0) != (ba < 0) || (ab == 0) != (ba == 0))
        abort();
    return 0;
}

/* shim's policy sections, as found in an image to sign or check: the
 * input up to its first NUL is an image's .sbat CSV, the rest a SbatLevel
 * (".sbatlevel" previous/latest or the SbatLevel variable); the whole
 * input is also read as a .vendor_cert section. */
#include <openssl/err.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "fuzz_keys.h"
#include "uefi/sbat.h"
#include "uefi/vendor_cert.h"

/* Lines of the image checked against a revoking level: each one costs a
 * pass over the whole image. */
#define MAX_REVOKE_LINES 8

/* "component,generation+1" for one image line, or 0 when the line has no
 * plain component,generation that a level could name (sbat_check refuses
 * those, and shim's UINT16 wraps 65535 + 1 to 0). */
static int revoking_line(const char *line, size_t len, char *out, size_t cap)
{
    const char *comma = memchr(line, ',', len), *gen;
    size_t glen;
    unsigned long g = 0;

    if (!comma || comma - line >= 128)
        return 0;
    gen = comma + 1;
    glen = strcspn(gen, ",\n");
    if (glen == 0 || glen > 9 || strspn(gen, "0123456789") != glen)
        return 0;
    for (size_t i = 0; i < glen; i++)
        g = g * 10 + (unsigned long)(gen[i] - '0');
    g &= 0xffff;
    if (g == 0xffff)
        return 0;
    snprintf(out, cap, "%.*s,%lu\n", (int)(comma - line), line, g + 1);
    return 1;
}

/* sbat.h's contract itself: an entry whose generation is below the
 * level's for its component is revoked. So a level naming an image line's
 * component one generation up revokes the image, unless another line of
 * the image does not parse (then it is an error). */
static void check_revokes_older(const char *image)
{
    const char *line = image;
    char level[160], why[48];
    rs_error err = { 0 };

    for (int n = 0; *line && n < MAX_REVOKE_LINES; n++) {
        size_t len = strcspn(line, "\n");

        if (revoking_line(line, len, level, sizeof(level)) && sbat_check(image, level, why, sizeof(why), &err) == 0)
            fuzz_bug("a level one generation above an image entry did not revoke it", level);
        line += len + (line[len] == '\n');
    }
}

static void check_sbat(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, '\0', size);
    size_t split = nul ? (size_t)(nul - data) : size;
    _cleanup_free_ char *image = strndup((const char *)data, split);
    _cleanup_free_ char *level = nul ? strndup((const char *)nul + 1, size - split - 1) : strdup("");
    /* Small, so the reason is truncated often. */
    char why[48];
    rs_error err = { 0 };
    int r;

    if (!image || !level)
        return;
    why[0] = '\0';
    r = sbat_check(image, level, why, sizeof(why), &err);
    if (r < -1 || r > 1)
        fuzz_bug("sbat_check returned neither -1, 0 nor 1", NULL);
    if (r < 0 && !err.msg[0])
        fuzz_bug("sbat_check failed without a message", NULL);
    if (r >= 0 && ((r == 1) != (why[0] != '\0') || strnlen(why, sizeof(why)) == sizeof(why)))
        fuzz_bug("revocation reason missing, unterminated or given for a pass", why);
    /* An empty level revokes nothing, whatever the image says. */
    if (sbat_check(image, "", why, sizeof(why), &err) > 0)
        fuzz_bug("an empty SBAT level revoked an image", image);
    check_revokes_older(image);
}

static void check_vendor_cert(const uint8_t *data, size_t size)
{
    _cleanup_trust_ rs_trust t;
    rs_error err = { 0 };

    if (rs_trust_init(&t, &err) < 0)
        fuzz_die("trust", err.msg);
    if (vendor_cert_parse(data, size, &t, &err) < 0 && !err.msg[0])
        fuzz_bug("vendor_cert_parse failed without a message", NULL);
    ERR_clear_error();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_sbat(data, size);
    check_vendor_cert(data, size);
    return 0;
}

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
#include "uefi/sbat_level.h"
#include "uefi/shim_db.h"

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

    /* Names with CR (a line end to shim) or a leading BOM byte (skipped
     * at the start) would not name the same component in a level. */
    if (!comma || comma - line >= 128 || memchr(line, '\r', (size_t)(comma - line)) || (uint8_t)line[0] == 0xef)
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
 * component one generation up refuses the image (shim refuses a malformed
 * .sbat as well). */
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

/* shim's cert_table, with a DER vendor_cert or vendor_db/vendor_dbx
 * signature lists; and the same bytes as a MokList. */
static void check_vendor_cert(const uint8_t *data, size_t size)
{
    _cleanup_shim_db_ shim_db db;
    rs_error err = { 0 };

    if (shim_db_init(&db, &err) < 0)
        fuzz_die("shim_db", err.msg);
    if (shim_db_add_vendor_cert(&db, data, size, &err) < 0 && !err.msg[0])
        fuzz_bug("shim_db_add_vendor_cert failed without a message", NULL);
    err.msg[0] = '\0';
    if (shim_list_add_esl(&db.mok, data, size, &err) < 0 && !err.msg[0])
        fuzz_bug("shim_list_add_esl failed without a message", NULL);
    ERR_clear_error();
}

/* The input as an SbatLevel variable: parsed, then chosen against a
 * shim's own level. A level that parses is either kept or replaced by the
 * candidate, never anything else. */
static void check_level(const uint8_t *data, size_t size)
{
    static const sbat_image shim = { .previous = "sbat,1,2025021800\nshim,4\ngrub,5\n",
                                      .latest = "sbat,1,2025021800\nshim,4\ngrub,5\n" };
    _cleanup_free_ char *var = strndup((const char *)data, size);
    sbat_level_input in = { var, true, (int)(size & 3) };
    sbat_level l;
    rs_error err = { 0 };
    int r;

    if (!var || sbat_level_check(var, &err) < 0)
        return;
    r = sbat_level_effective(&shim, &in, &l, &err);
    if (r < 0 && !err.msg[0])
        fuzz_bug("sbat_level_effective failed without a message", NULL);
    if (r == 0 && strcmp(l.csv, var) != 0 && strcmp(l.csv, shim.previous) != 0)
        fuzz_bug("the effective SBAT level is neither the variable nor the candidate", l.csv);
    if (r == 0)
        sbat_level_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_sbat(data, size);
    check_vendor_cert(data, size);
    check_level(data, size);
    return 0;
}

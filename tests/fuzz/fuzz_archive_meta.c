/* What the service reads about the archive's signatures and Release files
 * before it trusts anything: gpgv's status lines (they carry the signer's
 * user ID, chosen by whoever made the key) and a Release file's Date,
 * Valid-Until, Suite and Codename. Parsing must never crash; a verdict of
 * "good" needs both GOODSIG and VALIDSIG and none of the refusing words,
 * and a fresh Release must be within its dates. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_keys.h"
#include "service/gpgv.h"
#include "service/release_meta.h"

static void judge_status(const char *text, size_t len)
{
    static const char *const refusing[] = { "BADSIG", "ERRSIG", "EXPSIG", "EXPKEYSIG", "REVKEYSIG", "NO_PUBKEY",
                                            "NODATA" };
    rs_error err = { 0 };
    time_t at = 0;

    if (rs_gpgv_judge(text, len, &at, &err) < 0) {
        if (!err.msg[0])
            fuzz_bug("a refused status without a reason", NULL);
        return;
    }
    if (at <= 0 || !memmem(text, len, "[GNUPG:] GOODSIG", 16) || !memmem(text, len, "[GNUPG:] VALIDSIG ", 18))
        fuzz_bug("a signature judged good without GOODSIG, VALIDSIG and its time", NULL);
    /* Status words count at the start of a line, as gpgv writes them. */
    for (const char *p = text, *end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl ? nl : end) - p);

        for (size_t i = 0; i < sizeof(refusing) / sizeof(refusing[0]); i++) {
            char word[32];
            size_t w = (size_t)snprintf(word, sizeof(word), "[GNUPG:] %s", refusing[i]);

            if (n >= w && !memcmp(p, word, w) && (n == w || p[w] == ' '))
                fuzz_bug("a signature judged good despite", refusing[i]);
        }
        p = nl ? nl + 1 : end;
    }
}

static void read_release(const char *text, size_t len)
{
    rs_release_meta m;
    rs_error err = { 0 };
    const time_t now = 1800000000, age = 30 * 86400;

    if (rs_release_meta_parse(text, len, &m, &err) < 0) {
        if (!err.msg[0])
            fuzz_bug("a refused Release without a reason", NULL);
        return;
    }
    if (rs_release_meta_check_fresh(&m, now, age, &err) == 0 &&
        (!m.date || m.date < now - age || (m.valid_until && m.valid_until < now)))
        fuzz_bug("a stale Release judged fresh", NULL);
    rs_release_meta_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    judge_status((const char *)data, size);
    read_release((const char *)data, size);
    return 0;
}

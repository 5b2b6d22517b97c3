/* service/gpgv.c's verdict on gpgv's status lines, fed directly: gpgv's
 * own exit status refuses most bad signatures by itself, so only these
 * lines show whether the judgement does its part (docs/security.md, "Signed
 * inputs"). A good, valid signature needs GOODSIG and VALIDSIG; each
 * refusing keyword refuses, whatever else was said. */
#include <string.h>

#include "harness.h"
#include "service/gpgv.h"

#define FPR "0123456789ABCDEF0123456789ABCDEF01234567"
#define GOOD "[GNUPG:] NEWSIG\n[GNUPG:] KEY_CONSIDERED " FPR " 0\n[GNUPG:] SIG_ID abc 2026-01-02 1767312000\n" \
             "[GNUPG:] GOODSIG 89ABCDEF01234567 archive test <archive@example.org>\n"
#define VALID "[GNUPG:] VALIDSIG " FPR " 2026-01-02 1767312000 0 4 0 22 8 00 " FPR "\n"

static int judge(const char *status, time_t *when, rs_error *err)
{
    return rs_gpgv_judge(status, strlen(status), when, err);
}

static void test_good(void)
{
    time_t when = 0;
    rs_error err;

    CHECK(judge(GOOD VALID, &when, &err) == 0);
    CHECK(when == 1767312000);
    CHECK(judge(VALID GOOD, NULL, &err) == 0);
}

/* Each keyword gpgv uses for a signature that must not be taken, beside
 * lines that would otherwise pass. */
static void test_refusals(void)
{
    static const char *const keywords[] = {
        "BADSIG 89ABCDEF01234567 archive test <archive@example.org>",
        ("ERRSIG 89ABCDEF01234567 22 8 00 1767312000 9 " FPR),   /* one line, the fingerprint appended */
        "EXPSIG 89ABCDEF01234567 archive test <archive@example.org>",
        "EXPKEYSIG 89ABCDEF01234567 archive test <archive@example.org>",
        "REVKEYSIG 89ABCDEF01234567 archive test <archive@example.org>",
        "NO_PUBKEY 89ABCDEF01234567",
    };
    char status[2048];
    rs_error err;

    for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++) {
        const char *word = keywords[i];
        size_t n = strcspn(word, " ");

        snprintf(status, sizeof(status), "%s[GNUPG:] %s\n%s", GOOD, word, VALID);
        CHECK(judge(status, NULL, &err) < 0);
        CHECK(strstr(err.msg, "gpgv reports") && !strncmp(strstr(err.msg, "(") + 1, word, n));
        /* Last, after both good lines. */
        snprintf(status, sizeof(status), "%s%s[GNUPG:] %s", GOOD, VALID, word);
        CHECK(judge(status, NULL, &err) < 0);
    }
}

/* GOODSIG alone is what gpgv says for a signature by an expired key too
 * (with EXPKEYSIG beside it): without VALIDSIG there is no verdict. */
static void test_needs_both(void)
{
    rs_error err;

    CHECK(judge(GOOD, NULL, &err) < 0 && strstr(err.msg, "no good, valid signature"));
    CHECK(judge(VALID, NULL, &err) < 0 && strstr(err.msg, "no good, valid signature"));
    CHECK(judge("", NULL, &err) < 0);
    /* A VALIDSIG without its timestamp is no valid signature. */
    CHECK(judge(GOOD "[GNUPG:] VALIDSIG " FPR "\n", NULL, &err) < 0);
    CHECK(judge(GOOD "[GNUPG:] VALIDSIG " FPR " 2026-01-02 0\n", NULL, &err) < 0);
}

/* Only status lines count: text elsewhere, or a keyword that merely
 * starts like one, is not a verdict. */
static void test_only_status_lines(void)
{
    rs_error err;

    CHECK(judge("GOODSIG x\nVALIDSIG " FPR " 2026-01-02 1767312000\n", NULL, &err) < 0);
    CHECK(judge(GOOD VALID "[GNUPG:] BADSIGNATURE-NOT-A-KEYWORD\n", NULL, &err) == 0);
    CHECK(judge(GOOD VALID "gpgv: BADSIG in a comment\n", NULL, &err) == 0);
    CHECK(judge("[GNUPG:] GOODSIGX y\n" VALID, NULL, &err) < 0);
}

int main(void)
{
    test_good();
    test_refusals();
    test_needs_both();
    test_only_status_lines();
    return harness_finish("test_gpgv_judge");
}

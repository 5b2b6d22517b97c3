/* The value conventions of every --json document (base/json_values.c):
 * digests ALG:HEX in lowercase, times ISO 8601 UTC, nothing for unknowns. */
#include <string.h>

#include "base/json_values.h"
#include "crypto/digest.h"
#include "harness.h"

static int is_string(json_t *j, const char *want)
{
    int ok = json_is_string(j) && !strcmp(json_string_value(j), want);

    json_decref(j);
    return ok;
}

/* rs_json_write_string against jansson's own json_dumps, byte for byte. */
static bool writes_as_jansson(const char *s)
{
    json_t *j = json_string(s);
    char *want = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL, *got = NULL;
    size_t got_len = 0;
    FILE *f = open_memstream(&got, &got_len);
    bool ok;

    rs_json_write_string(f, s);
    fclose(f);
    ok = want && got && !strcmp(want, got);
    if (!ok)
        fprintf(stderr, "  jansson: %s\n  ours:    %s\n", want ? want : "(none)", got ? got : "(none)");
    free(want);
    free(got);
    json_decref(j);
    return ok;
}

static void write_string_matches_jansson(void)
{
    static const char *const cases[] = {
        "", "plain/path.ko", "a\"b", "back\\slash", "tab\there", "nl\n", "\b\f\r", "\x01\x1f", "\x7f",
        "\xc3\xbc nicode \xe2\x82\xac \xf0\x9f\x94\x91", "/slash/", "\"\"", "end\\",
    };
    char every_byte[128];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        CHECK(writes_as_jansson(cases[i]));
    for (int c = 1; c < 128; c++)
        every_byte[c - 1] = (char)c;
    every_byte[127] = '\0';
    CHECK(writes_as_jansson(every_byte));
}

int main(void)
{
    static const uint8_t bytes[] = { 0x00, 0x9f, 0xab, 0xff };
    rs_digest d = { .len = 32 };
    json_t *o = json_object();

    CHECK(is_string(rs_json_digest("sha256", bytes, sizeof(bytes)), "sha256:009fabff"));
    CHECK(rs_json_digest("sha256", bytes, 0) == NULL);
    CHECK(rs_json_digest(NULL, bytes, sizeof(bytes)) == NULL);
    CHECK(rs_json_digest("", bytes, sizeof(bytes)) == NULL);
    CHECK(is_string(rs_json_digest_hex("sha384", "00ff"), "sha384:00ff"));
    CHECK(rs_json_digest_hex("sha256", "00FF") == NULL);   /* not lowercase */
    CHECK(rs_json_digest_hex("sha256", "0ff") == NULL);    /* not whole bytes */
    CHECK(rs_json_digest_hex("sha256", "") == NULL);
    CHECK(rs_json_digest_hex("sha256", NULL) == NULL);

    CHECK(rs_md_by_name("sha256", &d.md, NULL) == 0);
    memset(d.bytes, 0xe3, d.len);
    CHECK(is_string(rs_digest_json(&d), "sha256:e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3"));
    d.len = 0;
    CHECK(rs_digest_json(&d) == NULL);
    d.md = NULL;
    d.len = 32;
    CHECK(rs_digest_json(&d) == NULL);   /* no algorithm: not a digest to show */

    CHECK(is_string(rs_json_time(0), "1970-01-01T00:00:00Z"));
    CHECK(is_string(rs_json_time(1796402846), "2026-12-04T16:47:26Z"));
    CHECK(rs_json_time(-1) == NULL);

    rs_json_set(o, "known", json_true());
    rs_json_set(o, "unknown", NULL);
    CHECK(json_object_size(o) == 1 && json_object_get(o, "known") && !json_object_get(o, "unknown"));
    json_decref(o);

    write_string_matches_jansson();
    return harness_finish("test_json_values");
}

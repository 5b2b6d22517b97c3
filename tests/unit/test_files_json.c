/* files.json read as a stream (pipeline/files_json_read.c over
 * base/json_stream.c): the same model as jansson's whole tree, however the
 * reads cut the text; every refusal named, with the line where it is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files_json_reference.h"
#include "harness.h"
#include "pipeline/files_json.h"

static const size_t chunks[] = { 0, 1, 2, 3, 5, 7, 64, 4096 };
#define N_CHUNKS (sizeof(chunks) / sizeof(chunks[0]))

static void reads_as_reference(const char *what, const char *text)
{
    for (size_t c = 0; c < N_CHUNKS; c++) {
        rs_files_json fj;
        rs_error err = { 0 };
        int rc = rs_files_json_parse_chunked(text, strlen(text), chunks[c], &fj, &err);

        if (rc < 0)
            fprintf(stderr, "%s, chunk %zu: %s\n", what, chunks[c], err.msg);
        CHECK(rc == 0);
        if (rc == 0) {
            if (!reference_equal(text, strlen(text), &fj))
                fprintf(stderr, "%s, chunk %zu: not the tree's model\n", what, chunks[c]);
            CHECK(reference_equal(text, strlen(text), &fj));
            rs_files_json_free(&fj);
        }
    }
}

static void the_three_shapes_and_what_is_ignored(void)
{
    reads_as_reference("wrapped", "{\"packages\": {\"shim-unsigned\": {\"trusted_certs\": [], \"files\": ["
                                  "{\"sig_type\": \"efi\", \"file\": \"usr/lib/shim/fbx64.efi\"},\n"
                                  "{\"sig_type\": \"efi\", \"file\": \"usr/lib/shim/mmx64.efi\"}]}}}");
    reads_as_reference("version 2, after", "{\"packages\": {\"a-pkg\": {\"files\": [{\"file\": \"x\", "
                                           "\"sig_type\": \"linux-module\"}]}}, \"version\": \"2\"}");
    reads_as_reference("version 2, before", "\n\t{ \"version\" : \"2\" ,\r\n \"packages\" : { \"a-pkg\" : "
                                            "{ \"files\" : [ { \"file\" : \"x\" , \"sig_type\" : \"efi\" } ] } } }\n");
    reads_as_reference("bare", "{\"a-pkg\": {\"files\": [{\"sig_type\": \"efi\", \"file\": \"b\"}]},"
                               "\"b-pkg\": {\"files\": [], \"trusted_certs\": [\"" "AB" "cd0123456789abcdef0123456789abcdef"
                               "0123456789abcdef0123456789ab\"]}}");
    /* Members not known here, of every type: numbers and literals end
     * where a read may end too, "12" before "345". */
    reads_as_reference("unknown members", "{\"packages\": {\"a-pkg\": "
                                          "{\"n\": 12345, \"t\": true, \"f\": false, \"z\": null, \"s\": \"\\u00fc\\n\","
                                          "\"files\": [{\"sig_type\": \"efi\", \"file\": \"p\\u00fcth\", \"x\": -1.5e3}],"
                                          "\"o\": {\"k\": [[]]}}}, \"comment\": [1, {\"x\": null}], \"tail\": 0}");
}

/* A number or a literal may end where a read ends ("12" of "12345"): at
 * every shift of the text against the reads, each is read whole. */
static void values_cut_by_reads(void)
{
    char text[1024];

    for (int pad = 0; pad < 300; pad++) {
        snprintf(text, sizeof(text), "{\"packages\": {\"a-pkg\": {%*s\"n\": 1234567890, \"t\": true, \"m\": -0.5e-3, "
                 "\"files\": [{\"sig_type\": \"efi\", \"file\": \"x\"}], \"z\": null, \"k\": 98765}}}", pad, "");
        reads_as_reference("a number at a read's end", text);
    }
}

/* A kernel's worth of entries in three packages, laid out as Debian's
 * generator writes them. */
static void a_long_list(void)
{
    size_t cap = 1 << 20, len = 0;
    char *text = malloc(cap);

    len += (size_t)snprintf(text + len, cap - len, "{\n  \"packages\": {\n");
    for (int p = 0; p < 3; p++) {
        len += (size_t)snprintf(text + len, cap - len, "%s    \"linux-image-%d-unsigned\": {\n      \"trusted_certs\": [],\n"
                                "      \"files\": [\n", p ? ",\n" : "", p);
        for (int f = 0; f < 2000; f++)
            len += (size_t)snprintf(text + len, cap - len, "%s        {\"sig_type\": \"%s\", \"file\": \"lib/modules/6.1/kernel/d%d/m%05d.ko\"}",
                                    f ? ",\n" : "", f ? "linux-module" : "efi", f % 37, f);
        len += (size_t)snprintf(text + len, cap - len, "\n      ]\n    }");
    }
    snprintf(text + len, cap - len, "\n  }\n}\n");
    reads_as_reference("6,000 files", text);
    free(text);
}

typedef struct refusal {
    const char *json, *says;
} refusal;

static void refuses(const refusal *r)
{
    for (size_t c = 0; c < N_CHUNKS; c++) {
        rs_files_json fj;
        rs_error err = { 0 };

        CHECK(rs_files_json_parse_chunked(r->json, strlen(r->json), chunks[c], &fj, &err) == -1);
        if (!strstr(err.msg, r->says))
            fprintf(stderr, "refusing %s (chunk %zu)\n  said: %s\n  want: %s\n", r->json, chunks[c], err.msg, r->says);
        CHECK(strstr(err.msg, r->says) != NULL);
    }
}

#define FILE_ENTRY "{\"sig_type\": \"efi\", \"file\": \"x\"}"

static void every_refusal_named(void)
{
    static const refusal cases[] = {
        { "", "line 1: premature end of input" },
        { "[]", "top level is not an object" },
        { "{}", "no packages listed" },
        { "{\"packages\": {}}", "no packages listed" },
        { "{\"packages\": []}", "\"packages\" is not an object" },
        { "{\"version\": \"3\", \"packages\": {}}", "unsupported files.json version" },
        { "{\"version\": \"2\"}", "version 2 files.json without \"packages\"" },
        { "{\"a-pkg\": {\"files\": []}, \"packages\": {}}", "\"packages\" after package entries" },
        { "{\"a-pkg\": {\"files\": []}, \"version\": \"2\"}", "\"version\" after package entries" },
        /* The first member tells the shape: one before "packages" is a package. */
        { "{\"comment\": \"x\", \"packages\": {}}", "package comment: needs a \"files\" list" },
        { "{\"A\": {\"files\": []}}", "'A' is not a valid package name" },
        { "{\"a-pkg\": []}", "package a-pkg: needs a \"files\" list" },
        { "{\"a-pkg\": {\"files\": {}}}", "package a-pkg: needs a \"files\" list" },
        { "{\"a-pkg\": {\"trusted_certs\": []}}", "package a-pkg: needs a \"files\" list" },
        { "{\"a-pkg\": {\"files\": [], \"trusted_certs\": [\"zz\"]}}", "trusted_certs entry is not a SHA-256" },
        { "{\"a-pkg\": {\"files\": [], \"trusted_certs\": {}}}", "trusted_certs is not a list" },
        { "{\"a-pkg\": {\"files\": [{\"file\": \"x\"}]}}", "files[0] needs string \"sig_type\" and \"file\"" },
        { "{\"a-pkg\": {\"files\": [" FILE_ENTRY ", 7]}}", "files[1] needs string" },
        { "{\"a-pkg\": {\"files\": [{\"sig_type\": \"pe\", \"file\": \"x\"}]}}", "unknown sig_type 'pe'" },
        { "{\"a-pkg\": {\"files\": [{\"sig_type\": \"efi\", \"file\": \"../x\"}]}}", "file paths must be relative" },
        /* The grammar between the values. */
        { "{\"a-pkg\": {\"files\": [" FILE_ENTRY ",]}}", "invalid JSON at line 1" },
        { "{\"a-pkg\": {\"files\": [" FILE_ENTRY "]},}", "line 1: string expected as an object key" },
        { "{\"a-pkg\": {\"files\": [" FILE_ENTRY " " FILE_ENTRY "]}}", "line 1: ',' or ']' expected" },
        { "{\"a-pkg\" {\"files\": []}}", "line 1: ':' expected" },
        { "{\"a-pkg\": {\"files\": []}\n\n\"b-pkg\": {}}", "invalid JSON at line 3: ',' or '}' expected" },
        { "{\"a-pkg\": {\"files\": []}} x", "end of file expected" },
        { "{\"a-pkg\": {\"files\": []}}{}", "end of file expected" },
        { "{\"a-pkg\": {\"files\": [\n\n\n{\"sig_type\": \"efi\", \"file\": \"x\"\n}x]}}", "invalid JSON at line 5" },
        { "{\"a-pkg\": {\"files\": [" FILE_ENTRY, "premature end of input" },
        { "{\"a-pkg\": {\"files\": [], \"n\": 12", "premature end of input" },
        { "{\"a-pkg\": {\"files\": [], \"n\": tru}}", "invalid JSON at line 1" },
        { "{\"a-\\u0000pkg\": {\"files\": []}}", "invalid JSON at line 1" },
        { "\xef\xbb\xbf{\"a-pkg\": {\"files\": []}}", "top level is not an object" },
        /* A key twice, at every depth. */
        { "{\"a-pkg\": {\"files\": []}, \"a-pkg\": {\"files\": []}}", "duplicate object key" },
        { "{\"packages\": {\"a-pkg\": {\"files\": []}, \"a-pkg\": {\"files\": []}}}", "duplicate object key" },
        { "{\"packages\": {}, \"packages\": {}}", "duplicate object key" },
        { "{\"a-pkg\": {\"files\": [], \"files\": []}}", "duplicate object key" },
        { "{\"a-pkg\": {\"files\": [], \"x\": 1, \"x\": 2}}", "duplicate object key" },
        { "{\"a-pkg\": {\"files\": [{\"sig_type\": \"efi\", \"file\": \"x\", \"file\": \"y\"}]}}", "duplicate object key" },
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        refuses(&cases[i]);
}

/* Each limit, and the sizes in its message. */
static void limits(void)
{
    size_t big = 2 * 1024 * 1024, n;
    char *text = malloc(RS_MAX_FILES_JSON + 64);

    /* One value longer than any real one. */
    n = (size_t)sprintf(text, "{\"a-pkg\": {\"files\": [], \"x\": \"");
    memset(text + n, 'a', big);
    strcpy(text + n + big, "\"}}");
    refuses(&(refusal){ text, "a value longer than the limit of 1048576 bytes" });
    /* A document longer than any real one, even of whitespace alone. */
    n = (size_t)sprintf(text, "{\"a-pkg\": {\"files\": []}");
    memset(text + n, ' ', RS_MAX_FILES_JSON);
    strcpy(text + n + RS_MAX_FILES_JSON, "}");
    refuses(&(refusal){ text, "longer than the limit of 16777216 bytes" });
    free(text);
    /* Members of a walked object. */
    text = malloc(1 << 20);
    n = (size_t)sprintf(text, "{\"a-pkg\": {\"files\": []");
    for (int i = 0; i < 1025; i++)
        n += (size_t)sprintf(text + n, ", \"k%d\": 0", i);
    strcpy(text + n, "}}");
    refuses(&(refusal){ text, "an object of more than 1024 members" });
    free(text);
}

int main(void)
{
    the_three_shapes_and_what_is_ignored();
    values_cut_by_reads();
    a_long_list();
    every_refusal_named();
    limits();
    return harness_finish("test_files_json");
}

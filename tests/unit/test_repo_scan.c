/* service/repo_scan.c: a Packages index searched through a fixed buffer,
 * trusted only once its size and SHA-256 match the Release file's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/bytes.h"
#include "crypto/ossl.h"
#include "harness.h"
#include "service/repo_scan.h"

static char dir[] = "/tmp/test_repo_scan.XXXXXX";
static char path[256];

static void stanza(rs_bytes *b, const char *pkg, const char *version, const char *arch, size_t desc_lines)
{
    char text[512];
    rs_error err;

    snprintf(text, sizeof(text),
             "Package: %s\nVersion: %s\nArchitecture: %s\nFilename: pool/main/%s_%s_%s.deb\nSize: 1234\n"
             "SHA256: %064d\nDescription: a package\n",
             pkg, version, arch, pkg, version, arch, 7);
    rs_bytes_append(b, text, strlen(text), &err);
    for (size_t i = 0; i < desc_lines; i++)
        rs_bytes_append(b, " a line of a long description, long enough to take some room\n", 61, &err);
    rs_bytes_append(b, "\n", 1, &err);
}

/* Writes b as the index and describes it as a Release file would. */
static rs_release_file listed(const rs_bytes *b)
{
    rs_release_file f = { .path = "main/binary-amd64/Packages", .size = b->len };
    FILE *fp = fopen(path, "wb");

    /* fwrite may not be given NULL, even for nothing: an empty index writes nothing. */
    if (!fp || (b->len && fwrite(b->data, 1, b->len, fp) != b->len) || fclose(fp) != 0)
        abort();
    rs_sha256(b->data, b->len, f.sha256);
    return f;
}

static int find(const rs_release_file *f, const char *pkg, const char *version, rs_repo_package *p, bool *found,
                rs_error *err)
{
    return rs_packages_scan(path, f, pkg, version, "amd64", p, found, err);
}

/* Many stanzas, so paragraphs and lines straddle the 64 KiB reads. */
static void test_found_across_chunks(void)
{
    rs_bytes b = { 0 };
    rs_repo_package p;
    rs_error err;
    bool found;

    for (int i = 0; i < 400; i++) {
        char name[32];

        snprintf(name, sizeof(name), "pkg%d", i);
        stanza(&b, name, "1.0-1", i % 2 ? "amd64" : "all", (size_t)(i % 7) * 5);
    }
    rs_release_file f = listed(&b);

    CHECK(find(&f, "pkg399", "1.0-1", &p, &found, &err) == 0 && found);
    CHECK(found && !strcmp(p.filename, "pool/main/pkg399_1.0-1_amd64.deb") && p.size == 1234);
    rs_repo_package_free(&p);
    CHECK(find(&f, "pkg200", "1.0-1", &p, &found, &err) == 0 && found && !strcmp(p.architecture, "all"));
    rs_repo_package_free(&p);
    CHECK(find(&f, "pkg200", "2.0-1", &p, &found, &err) == 0 && !found);
    CHECK(find(&f, "pkg1000", "1.0-1", &p, &found, &err) == 0 && !found);
    rs_bytes_free(&b);
}

/* A match in a file that is not the one listed is not trusted. */
static void test_mismatch(void)
{
    rs_bytes b = { 0 };
    rs_repo_package p;
    rs_error err;
    bool found;

    stanza(&b, "shim", "15.8-1", "amd64", 2);
    rs_release_file f = listed(&b);

    f.sha256[0] ^= 1;
    CHECK(find(&f, "shim", "15.8-1", &p, &found, &err) < 0 && !found);
    CHECK(strstr(err.msg, path) && strstr(err.msg, "does not match the size and SHA-256"));
    f.sha256[0] ^= 1;
    f.size++;
    CHECK(find(&f, "shim", "15.8-1", &p, &found, &err) < 0 && !found && strstr(err.msg, "does not match"));
    rs_bytes_free(&b);
}

/* A bad paragraph anywhere fails the search, naming its line, even after
 * a match; an oversized one names the limit. */
static void test_bad_paragraph(void)
{
    rs_bytes b = { 0 };
    rs_repo_package p;
    rs_error err;
    bool found;

    stanza(&b, "shim", "15.8-1", "amd64", 0);
    rs_bytes_append(&b, "no colon here\n\n", 15, &err);
    rs_release_file f = listed(&b);

    CHECK(find(&f, "shim", "15.8-1", &p, &found, &err) < 0 && !found);
    CHECK(strstr(err.msg, "the paragraph at line 9"));
    rs_bytes_free(&b);
    b = (rs_bytes){ 0 };
    stanza(&b, "big", "1", "amd64", 20000);
    f = listed(&b);
    CHECK(find(&f, "big", "1", &p, &found, &err) < 0 && strstr(err.msg, "is over 1048576 bytes"));
    rs_bytes_free(&b);
}

/* CRLF line ends and no final blank line, as some mirrors serve. */
static void test_crlf_and_no_final_blank(void)
{
    static const char text[] = "Package: shim\r\nVersion: 15.8-1\r\nArchitecture: amd64\r\n"
                               "Filename: pool/main/s/shim.deb\r\nSize: 10\r\nSHA256: "
                               "0000000000000000000000000000000000000000000000000000000000000001\r\n";
    rs_bytes b = { 0 };
    rs_repo_package p;
    rs_error err;
    bool found;

    rs_bytes_append(&b, text, sizeof(text) - 1, &err);
    rs_release_file f = listed(&b);

    CHECK(find(&f, "shim", "15.8-1", &p, &found, &err) == 0 && found && p.size == 10);
    rs_repo_package_free(&p);
    rs_bytes_free(&b);
}

/* An empty index has nothing, and that is no error. */
static void test_empty(void)
{
    rs_bytes b = { 0 };
    rs_repo_package p;
    rs_error err;
    bool found = true;
    rs_release_file f = listed(&b);

    CHECK(find(&f, "shim", "15.8-1", &p, &found, &err) == 0 && !found);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    snprintf(path, sizeof(path), "%s/Packages", dir);
    test_found_across_chunks();
    test_mismatch();
    test_bad_paragraph();
    test_crlf_and_no_final_blank();
    test_empty();
    unlink(path);
    rmdir(dir);
    return harness_finish("test_repo_scan");
}

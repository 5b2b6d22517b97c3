/* base/input.c and the copy in output.c: a file's SHA-256 through a fixed
 * buffer equals the hash of its bytes (empty, small, many chunks); a whole
 * read over its limit names the limit; a copy has the same bytes and
 * exactly the mode asked for, and a failed one leaves nothing; the bytes
 * hashed are counted once each, for progress; the bytes a check read are
 * the bytes hashed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "crypto/ossl.h"
#include "harness.h"

static char dir[] = "/tmp/test_input.XXXXXX";

static void hashes_like_memory(size_t size)
{
    uint8_t *data = malloc(size ? size : 1), want[32], got[32];
    rs_input in = { .fd = -1 };
    rs_error err;
    uint64_t before;

    for (size_t i = 0; i < size; i++)
        data[i] = (uint8_t)(i * 31 + i / 7);
    CHECK(rs_write_file(harness_path(dir, "f"), data, size, 0644, &err) == 0);
    rs_sha256(data, size, want);
    CHECK(rs_input_open(&in, harness_path(dir, "f"), &err) == 0);
    before = rs_hashed_bytes();
    CHECK(rs_input_sha256(&in, got, &err) == 0);
    CHECK(!memcmp(want, got, 32));
    /* Progress counts what was hashed: every byte, once. */
    CHECK(rs_hashed_bytes() - before == size);
    rs_input_close(&in);
    free(data);
}

/* Once the checks have read a file's two ends, hashing uses those bytes
 * rather than reading them again: the digest covers exactly what was
 * checked, even if the file changes on disk in between. */
static void hashes_what_was_checked(void)
{
    size_t size = 5 * 64 * 1024 + 321;
    uint8_t *data = malloc(size), head[16], tail[16], want[32], got[32];
    rs_input in = { .fd = -1 };
    rs_error err;
    FILE *f;

    for (size_t i = 0; i < size; i++)
        data[i] = (uint8_t)(i * 17 + i / 3);
    CHECK(rs_write_file(harness_path(dir, "w"), data, size, 0644, &err) == 0);
    CHECK(rs_input_open(&in, harness_path(dir, "w"), &err) == 0);
    CHECK(rs_input_read(&in, 0, head, sizeof(head), &err) == 0);
    CHECK(rs_input_read(&in, size - sizeof(tail), tail, sizeof(tail), &err) == 0);
    /* The middle and both ends change on disk after the checks. */
    f = fopen(harness_path(dir, "w"), "r+");
    CHECK(f != NULL);
    if (f) {
        static const uint8_t changed[10] = { 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa };

        fseek(f, 100, SEEK_SET);
        fwrite(changed, 1, sizeof(changed), f);         /* inside the first window: not seen */
        fseek(f, 200 * 1024, SEEK_SET);
        fwrite("middle", 1, 6, f);                      /* read now: seen */
        memcpy(data + 200 * 1024, "middle", 6);
        fclose(f);
    }
    for (size_t k = 0; k < 3; k++) {
        static const size_t from[] = { 0, 10, 70000 }, to_end[] = { 0, 10, 70000 };
        size_t off = from[k], len = size - off - to_end[k];
        _cleanup_(rs_mdctxp) EVP_MD_CTX *md = EVP_MD_CTX_new();
        unsigned int n;
        uint8_t *expect = malloc(size);

        memcpy(expect, data, size);                     /* the window's bytes are the old ones */
        rs_sha256(expect + off, len, want);
        CHECK(md && EVP_DigestInit_ex(md, EVP_sha256(), NULL));
        CHECK(rs_input_hash(&in, off, len, md, &err) == 0);
        CHECK(EVP_DigestFinal_ex(md, got, &n) && !memcmp(want, got, 32));
        free(expect);
    }
    {
        _cleanup_(rs_mdctxp) EVP_MD_CTX *md = EVP_MD_CTX_new();

        CHECK(md && EVP_DigestInit_ex(md, EVP_sha256(), NULL));
        CHECK(rs_input_hash(&in, 1, size, md, &err) < 0 && strstr(err.msg, "truncated"));
    }
    rs_input_close(&in);
    free(data);
}

static void whole_read_limit(void)
{
    rs_bytes b = { 0 };
    rs_error err;

    CHECK(rs_write_file(harness_path(dir, "small"), "0123456789", 10, 0644, &err) == 0);
    CHECK(rs_read_file(harness_path(dir, "small"), 9, &b, &err) < 0 && strstr(err.msg, "10 bytes, limit 9"));
    CHECK(rs_read_file(harness_path(dir, "small"), 10, &b, &err) == 0 && b.len == 10);
    rs_bytes_free(&b);
}

static void copies(void)
{
    rs_bytes b = { 0 };
    struct stat st;
    rs_error err;
    mode_t old = umask(077);

    CHECK(rs_copy_file(harness_path(dir, "small"), harness_path(dir, "copy"), 0644, &err) == 0);
    CHECK(stat(harness_path(dir, "copy"), &st) == 0 && (st.st_mode & 0777) == 0644);
    CHECK(rs_read_file(harness_path(dir, "copy"), 100, &b, &err) == 0 && b.len == 10 && !memcmp(b.data, "0123456789", 10));
    rs_bytes_free(&b);
    CHECK(rs_copy_file(harness_path(dir, "missing"), harness_path(dir, "copy2"), 0644, &err) < 0 &&
          strstr(err.msg, "missing"));
    CHECK(access(harness_path(dir, "copy2"), F_OK) < 0);
    umask(old);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    hashes_like_memory(0);
    hashes_like_memory(1000);
    hashes_like_memory(3 * 256 * 1024 + 17);
    hashes_what_was_checked();
    whole_read_limit();
    copies();
    rs_remove_tree(dir);
    return harness_finish("test_input");
}

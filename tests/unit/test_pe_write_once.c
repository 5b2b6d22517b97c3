/* Signing reads a PE image once: the digest sums the image data for the
 * checksum as it hashes it, and the write then copies that data without
 * reading it again. The bytes written must be those of the write that
 * reads the data itself, for an image whose hashed ranges cover its data
 * (one section; one section and data after it) and for one with a gap the
 * digest never reads (which must take the reading path). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file.h"
#include "crypto/digest.h"
#include "formats/format.h"
#include "harness.h"
#include "pe_test_image.h"

static char dir[] = "/tmp/test_pe_write_once.XXXXXX";

/* The signed image's bytes: a stand-in signature appended, after a digest
 * (the read-once path) or without one (the reading path). */
static rs_bytes write_signed(const char *path, bool digest_first, bool *summed)
{
    static const uint8_t sig[] = { 0x30, 0x03, 0x02, 0x01, 0x07 };
    rs_bytes der = { .data = (uint8_t *)sig, .len = sizeof(sig) }, out_bytes = { 0 };
    rs_edit edit = { .remove_index = -1, .append = &der, .n_append = 1 };
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    _cleanup_output_ rs_output out = { .fd = -1 };
    rs_digest d;
    rs_error err;

    CHECK(rs_image_open(&img, path, &err) == 0);
    if (digest_first)
        CHECK(img.format->digest(&img, EVP_sha256(), &d, &err) == 0);
    *summed = ((pe_layout *)img.priv)->data_summed;
    CHECK(rs_output_open(&out, harness_path(dir, "out"), 0644, &err) == 0);
    CHECK(img.format->write(&img, &edit, &out, &err) == 0);
    CHECK(rs_output_commit(&out, &err) == 0);
    CHECK(rs_read_file(harness_path(dir, "out"), 1 << 20, &out_bytes, &err) == 0);
    return out_bytes;
}

static void same_bytes(const char *name, image im, bool covered)
{
    rs_error err;
    rs_bytes once, twice;
    bool summed, summed_without;

    CHECK(rs_write_file(harness_path(dir, name), im.data, im.len, 0644, &err) == 0);
    once = write_signed(harness_path(dir, name), true, &summed);
    twice = write_signed(harness_path(dir, name), false, &summed_without);
    if (summed != covered || summed_without)
        fprintf(stderr, "%s: data summed by the digest: %d, expected %d\n", name, summed, covered);
    CHECK(summed == covered && !summed_without);
    CHECK(once.len == twice.len && once.len > im.len && !memcmp(once.data, twice.data, once.len));
    rs_bytes_free(&once);
    rs_bytes_free(&twice);
    free(im.data);
}

int main(void)
{
    image gap = base_image(BASE_SIZE);

    if (!mkdtemp(dir))
        return 1;
    same_bytes("one-section", base_image(BASE_SIZE), true);
    same_bytes("trailing-odd", base_image(BASE_SIZE + 3), true);
    same_bytes("trailing-even", base_image(BASE_SIZE + 0x41), true);
    /* The section starts 0x80 bytes after the headers: a gap. */
    pe_put_le32(gap.data + SECTIONS + 16, 0x180);
    pe_put_le32(gap.data + SECTIONS + 20, 0x280);
    same_bytes("gap", gap, false);
    rs_remove_tree(dir);
    return harness_finish("test_pe_write_once");
}

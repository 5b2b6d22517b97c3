/* Malformed PE/COFF headers, hand-built, and inputs the fuzzers found:
 * each must be refused with a clean error that says what is wrong (or, for
 * the well-formed controls, open and survive every operation). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/format.h"
#include "formats/pe/pe_layout.h"
#include "ops/ops.h"
#include "harness.h"
#include "pe_test_image.h"

/* The base image followed by a certificate table of one entry with the
 * given dwLength, whose body is `body` bytes of a DER SEQUENCE. */
static image signed_image(uint32_t dw_length, size_t body)
{
    image im = base_image(BASE_SIZE + PE_CERT_HEADER + body);

    pe_put_le32(im.data + CERT_DIR, BASE_SIZE);
    pe_put_le32(im.data + CERT_DIR + 4, (uint32_t)(PE_CERT_HEADER + body));
    pe_put_le32(im.data + BASE_SIZE, dw_length);
    pe_put_le16(im.data + BASE_SIZE + 4, PE_CERT_REVISION);
    pe_put_le16(im.data + BASE_SIZE + 6, PE_CERT_TYPE_PKCS);
    if (body >= 2) {
        im.data[BASE_SIZE + 8] = 0x30;
        im.data[BASE_SIZE + 9] = (uint8_t)(body - 2 < 0x80 ? body - 2 : 0);
    }
    return im;
}

static char *write_temp(const image *im)
{
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char *path;
    int fd;

    if (asprintf(&path, "%s/test_pe_regressions.XXXXXX", dir) < 0)
        abort();
    fd = mkstemp(path);
    if (fd < 0 || write(fd, im->data, im->len) != (ssize_t)im->len)
        abort();
    close(fd);
    return path;
}

/* Opening must fail, cleanly, with a message containing `want`. */
static void expect_refused(const char *name, image im, const char *want)
{
    char *path = write_temp(&im);
    rs_image img;
    rs_error err = { 0 };
    int rc = rs_image_open(&img, path, &err);

    if (rc == 0)
        rs_image_close(&img);
    if (rc != -1 || !strstr(err.msg, want)) {
        fprintf(stderr, "%s: expected -1 with \"%s\", got %d: %s\n", name, want, rc, err.msg);
        harness_failures++;
    }
    unlink(path);
    free(path);
    free(im.data);
}

/* Opening must succeed, and the read-only operations (and, when signed, a
 * strip) must run to completion. */
static void expect_opens(const char *name, image im, size_t want_sigs)
{
    char *path = write_temp(&im);
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    rs_error err = { 0 };
    rs_digest d;

    if (rs_image_open(&img, path, &err) < 0) {
        fprintf(stderr, "%s: does not open: %s\n", name, err.msg);
        harness_failures++;
    } else {
        CHECK(img.format->count(&img) == want_sigs);
        CHECK(img.format->digest(&img, EVP_sha256(), &d, &err) == 0);
        for (size_t i = 0; i < want_sigs; i++) {
            rs_bytes der = { 0 };

            CHECK(img.format->extract(&img, i, &der, &err) == 0);
            rs_bytes_free(&der);
        }
        rs_image_close(&img);
        char *out;
        if (asprintf(&out, "%s.stripped", path) < 0)
            abort();
        /* Stripping an unsigned image is refused by design. */
        if (want_sigs && rs_op_strip(path, -1, out, &err) < 0) {
            fprintf(stderr, "%s: strip failed: %s\n", name, err.msg);
            harness_failures++;
        }
        unlink(out);
        free(out);
    }
    unlink(path);
    free(path);
    free(im.data);
}

static image with32(image im, size_t off, uint32_t v)
{
    pe_put_le32(im.data + off, v);
    return im;
}

static image with16(image im, size_t off, uint16_t v)
{
    pe_put_le16(im.data + off, v);
    return im;
}

int main(void)
{
    /* Controls: the builders make images that are fine. */
    expect_opens("base", base_image(BASE_SIZE), 0);
    expect_opens("one signature", signed_image(PE_CERT_HEADER + 16, 16), 1);
    expect_opens("odd length, unsigned", base_image(BASE_SIZE + 3), 0);

    expect_refused("tiny", base_image(63), "too small for a DOS header");
    expect_refused("e_lfanew past EOF", with32(base_image(BASE_SIZE), 0x3c, BASE_SIZE + 0x100),
                   "PE header offset 0x500 is outside the file");
    expect_refused("e_lfanew huge", with32(base_image(BASE_SIZE), 0x3c, 0xfffffff0u), "is outside the file");
    expect_refused("no PE signature", with32(base_image(BASE_SIZE), LFANEW, 0), "no PE signature");
    expect_refused("unknown machine", with16(base_image(BASE_SIZE), COFF, 0x1234), "unsupported machine type 0x1234");
    expect_refused("unknown magic", with16(base_image(BASE_SIZE), OPT, 0x107), "unknown optional header magic");
    expect_refused("SizeOfOptionalHeader too small", with16(base_image(BASE_SIZE), COFF + 16, 100),
                   "optional header (100 bytes) too small");
    expect_refused("NumberOfRvaAndSizes=4", with32(base_image(BASE_SIZE), OPT + 108, 4),
                   "NumberOfRvaAndSizes is 4");
    expect_refused("SizeOfHeaders past EOF", with32(base_image(BASE_SIZE), OPT + 60, BASE_SIZE + 8),
                   "SizeOfHeaders 0x408 is larger than the file");
    expect_refused("data directory past SizeOfHeaders", with32(base_image(BASE_SIZE), OPT + 60, 0xc0),
                   "data directory lies outside SizeOfHeaders");
    expect_refused("section table past SizeOfHeaders", with16(base_image(BASE_SIZE), COFF + 2, 10),
                   "section table (10 sections) extends past SizeOfHeaders");
    expect_refused("0xFFFF sections", with16(base_image(BASE_SIZE), COFF + 2, 0xffff),
                   "section table (65535 sections) extends past SizeOfHeaders");
    expect_refused("section past EOF", with32(base_image(BASE_SIZE), SECTIONS + 20, 0x300),
                   "section 0 (.text) at 0x300+0x200 extends past the image data");
    expect_refused("section size wraps", with32(base_image(BASE_SIZE), SECTIONS + 16, 0xffffffffu),
                   "extends past the image data");
    expect_refused("section ends inside the certificate table",
                   with32(signed_image(PE_CERT_HEADER + 16, 16), SECTIONS + 16, 0x210), "extends past the image data");

    {
        image im = base_image(BASE_SIZE);

        pe_put_le32(im.data + CERT_DIR, BASE_SIZE);
        pe_put_le32(im.data + CERT_DIR + 4, 0x100);
        expect_refused("cert table past EOF", im, "extends past the end of the file");
    }
    {
        image im = signed_image(PE_CERT_HEADER + 16, 16 + 8);

        pe_put_le32(im.data + CERT_DIR + 4, PE_CERT_HEADER + 16);
        expect_refused("cert table not at end", im, "is not at the end of the file");
    }
    {
        image im = base_image(BASE_SIZE + 0x20);

        pe_put_le32(im.data + CERT_DIR, BASE_SIZE + 4);
        pe_put_le32(im.data + CERT_DIR + 4, 0x1c);
        expect_refused("cert table unaligned", im, "is not 8-byte aligned");
    }
    {
        image im = base_image(BASE_SIZE);

        pe_put_le32(im.data + CERT_DIR, 0x100);
        pe_put_le32(im.data + CERT_DIR + 4, BASE_SIZE - 0x100);
        expect_refused("cert table overlaps headers", im, "overlaps the headers");
    }
    expect_refused("cert entry dwLength 0", signed_image(0, 16), "has invalid length 0");
    expect_refused("cert entry dwLength 7", signed_image(7, 16), "has invalid length 7");
    expect_refused("cert entry dwLength 8", signed_image(8, 16), "has invalid length 8");
    expect_refused("cert entry dwLength huge", signed_image(0xfffffff8u, 16), "has invalid length 4294967288");
    expect_refused("cert entry past the table", signed_image(PE_CERT_HEADER + 17, 16), "has invalid length 25");
    expect_refused("cert table with stray bytes", signed_image(PE_CERT_HEADER + 8, 12), "4 stray bytes");

    /* Found by fuzz_pe: a section whose raw data covers CheckSum (here,
     * the whole header block) hashed the field that signing rewrites, so
     * the signed image no longer matched its own signature. */
    expect_refused("section over CheckSum", with32(base_image(BASE_SIZE), SECTIONS + 20, 0),
                   "section 0 (.text) at 0x0+0x200 overlaps the CheckSum or certificate table fields");
    {
        image im = base_image(BASE_SIZE);

        /* A one-byte section on the last byte of DataDirectory[4]. */
        pe_put_le32(im.data + SECTIONS + 16, 1);
        pe_put_le32(im.data + SECTIONS + 20, CERT_DIR + 7);
        expect_refused("section over the certificate table entry", im,
                       "overlaps the CheckSum or certificate table fields");
    }

    {
        /* Found while writing fuzz_pe's rewrite check: an odd-length image whose
         * overlapping sections add up past the padded size (so nothing
         * hashes the padding) opened and signed fine, but the signed
         * image, padding now on disk, was refused as not fully covered. */
        image im = base_image(BASE_SIZE + 3);

        pe_put_le16(im.data + COFF + 2, 2);
        pe_put_le32(im.data + SECTIONS + 16, 0x203);
        memcpy(im.data + SECTIONS + 40, ".data", 5);
        pe_put_le32(im.data + SECTIONS + 40 + 16, 8);
        pe_put_le32(im.data + SECTIONS + 40 + 20, 0x200);
        expect_refused("overlapping sections leave the padding unhashed", im,
                       "not covered by the Authenticode digest");
    }

    {
        /* Gaps between sections are left unhashed by design, as EDK2 and
         * sbsign do (the loader never maps them): such images open. */
        image im = base_image(BASE_SIZE);

        pe_put_le32(im.data + SECTIONS + 16, 0x100);
        pe_put_le32(im.data + SECTIONS + 20, 0x300);
        expect_opens("gap before a section", im, 0);
    }
    {
        /* Data after the last section is hashed by the trailing run. */
        image im = base_image(BASE_SIZE + 0x100);

        expect_opens("data after the sections", im, 0);
    }

    return harness_finish("test_pe_regressions");
}

/* The module trailer and ELF checks on hand-made files: what the kernel
 * accepts opens, and each way a trailer or object can be damaged is
 * refused rather than signed over. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/module/module_elf.h"
#include "formats/module/module_trailer.h"
#include "harness.h"

#define SHOFF 64
#define SHENT 64
#define ELF_LEN (SHOFF + 2 * SHENT)

static char dir[] = "/tmp/rs-test-module-XXXXXX";

/* A minimal ELF64 LSB object: header, then two section headers (the
 * null one and one empty section) ending the file. */
static void make_elf(uint8_t *buf, uint16_t type)
{
    memset(buf, 0, ELF_LEN);
    memcpy(buf, "\x7f" "ELF", 4);
    buf[4] = 2;
    buf[5] = 1;
    buf[6] = 1;
    buf[16] = (uint8_t)type;
    buf[0x28] = SHOFF;
    buf[0x3a] = SHENT;
    buf[0x3c] = 2;
}

static int open_bytes(rs_input *in, const uint8_t *data, size_t len)
{
    char path[256];
    FILE *f;
    rs_error err;

    snprintf(path, sizeof(path), "%s/f", dir);
    f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0)
        return -1;
    return rs_input_open(in, path, &err);
}

/* Parses a file of the given bytes; returns the parse result. */
static int parse(const uint8_t *data, size_t len, module_layout *m, rs_error *err)
{
    rs_input in;
    int rc;

    if (open_bytes(&in, data, len) < 0)
        return -2;
    rc = module_trailer_parse(&in, m, err);
    if (rc == 0)
        rc = module_elf_check(&in, m->content_len, err);
    rs_input_close(&in);
    return rc;
}

/* elf || sig (sig_len bytes) || trailer */
static size_t signed_file(uint8_t *buf, uint32_t sig_len)
{
    make_elf(buf, 1);
    memset(buf + ELF_LEN, 0x30, sig_len);
    module_trailer_encode(sig_len, buf + ELF_LEN + sig_len);
    return ELF_LEN + sig_len + MODULE_TRAILER_LEN;
}

static void test_encode(void)
{
    uint8_t t[MODULE_TRAILER_LEN];
    static const uint8_t want[12] = { 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0x02, 0xa9 };

    module_trailer_encode(0x2a9, t);
    CHECK(memcmp(t, want, sizeof(want)) == 0);
    CHECK(memcmp(t + 12, "~Module signature appended~\n", 28) == 0);
}

static void test_accepted(void)
{
    uint8_t buf[1024] = { 0 };   /* parse() is also given bytes past what make_elf writes */
    module_layout m;
    rs_error err;

    make_elf(buf, 1);
    CHECK(parse(buf, ELF_LEN, &m, &err) == 0);
    CHECK(!m.is_signed && m.content_len == ELF_LEN);
    CHECK(parse(buf, signed_file(buf, 100), &m, &err) == 0);
    CHECK(m.is_signed && m.content_len == ELF_LEN && m.sig_len == 100);
}

static void test_refused(void)
{
    uint8_t buf[1024] = { 0 };   /* parse() is also given bytes past what make_elf writes */
    module_layout m;
    rs_error err;
    size_t len;

    make_elf(buf, 2);
    CHECK(parse(buf, ELF_LEN, &m, &err) < 0 && strstr(err.msg, "ET_REL"));
    make_elf(buf, 1);
    CHECK(parse(buf, ELF_LEN - 1, &m, &err) < 0 && strstr(err.msg, "section headers"));
    CHECK(parse(buf, ELF_LEN + 3, &m, &err) < 0 && strstr(err.msg, "3 unexpected bytes"));

    len = signed_file(buf, 100);
    CHECK(parse(buf, len - 30, &m, &err) < 0 && strstr(err.msg, "unexpected bytes"));
    buf[len - 40 + 5] = 1;
    CHECK(parse(buf, len, &m, &err) < 0 && strstr(err.msg, "reserved"));
    len = signed_file(buf, 100);
    buf[len - 40 + 2] = 1;
    CHECK(parse(buf, len, &m, &err) < 0 && strstr(err.msg, "id_type 1"));
    len = signed_file(buf, 100);
    buf[len - 40 + 10] = 0x7f;
    CHECK(parse(buf, len, &m, &err) < 0 && strstr(err.msg, "exceeds"));
    len = signed_file(buf, 100);
    memset(buf + len - 32, 0, 4);
    CHECK(parse(buf, len, &m, &err) < 0 && strstr(err.msg, "sig_len 0"));
    /* Signed twice: a second signature over the first one's trailer
     * (found by fuzz_module, whose strip then gave a file that did not open). */
    len = signed_file(buf, 100);
    memset(buf + len, 0x30, 50);
    module_trailer_encode(50, buf + len + 50);
    CHECK(parse(buf, len + 50 + MODULE_TRAILER_LEN, &m, &err) < 0 && strstr(err.msg, "signed twice"));
    /* A magic that differs in its last byte (the newline) is no trailer:
     * the kernel takes such a module as unsigned, and the bytes after the
     * object are then a damage. */
    len = signed_file(buf, 100);
    buf[len - 1] = ' ';
    CHECK(parse(buf, len, &m, &err) < 0 && strstr(err.msg, "unexpected bytes"));
    len = signed_file(buf, 100);
    buf[len - 28] = '!';
    CHECK(parse(buf, len, &m, &err) < 0 && strstr(err.msg, "unexpected bytes"));
    /* The kernel reads e_shnum entries of exactly one Elf64_Shdr each and
     * refuses any other e_shentsize: a larger one was a way to make the
     * service read e_shnum x 65535 bytes of a sparse memfd (#46). */
    make_elf(buf, 1);
    buf[0x3a] = 0;
    buf[0x3b] = 0x20;   /* 8192 */
    CHECK(parse(buf, ELF_LEN, &m, &err) < 0 && strstr(err.msg, "e_shentsize is 8192, not 64"));
    buf[0x3a] = SHENT + 8;
    buf[0x3b] = 0;
    CHECK(parse(buf, ELF_LEN + 16, &m, &err) < 0 && strstr(err.msg, "e_shentsize is 72"));
    /* Only the magic and part of the struct: too short to be a trailer. */
    module_trailer_encode(0, buf);
    CHECK(parse(buf + 4, MODULE_TRAILER_LEN - 4, &m, &err) < 0 && strstr(err.msg, "truncated"));
}

/* The largest table the kernel reads, 65535 entries of 64 bytes (4 MiB),
 * in a sparse file: checked through a fixed window, so the check holds
 * the same few kilobytes as for two entries; a file one entry short is
 * refused. The entries are the null section, so the table ends the file. */
static void test_largest_table(void)
{
    const uint64_t table = 65535ULL * SHENT, len = SHOFF + table;
    uint8_t buf[ELF_LEN];
    char path[256];
    rs_input in;
    rs_error err;
    int fd;

    make_elf(buf, 1);
    buf[0x3c] = 0xff;
    buf[0x3d] = 0xff;
    snprintf(path, sizeof(path), "%s/f", dir);
    CHECK((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) >= 0);
    CHECK(write(fd, buf, SHOFF) == SHOFF && ftruncate(fd, (off_t)len) == 0 && close(fd) == 0);
    CHECK(rs_input_open(&in, path, &err) == 0);
    CHECK(module_elf_check(&in, len, &err) == 0);
    CHECK(module_elf_check(&in, len - 1, &err) < 0 && strstr(err.msg, "run past"));
    rs_input_close(&in);
}

int main(void)
{
    char path[256];

    CHECK(mkdtemp(dir) != NULL);
    test_encode();
    test_accepted();
    test_refused();
    test_largest_table();
    snprintf(path, sizeof(path), "%s/f", dir);
    unlink(path);
    rmdir(dir);
    return harness_finish("test_module_trailer");
}

/* pe_sections.h, what the UEFI layer reads of a PE image: every section
 * header as stored (empty sections too), DllCharacteristics, and a named
 * section's data cut to VirtualSize; an absent one is 0. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "formats/pe/pe_sections.h"
#include "harness.h"

/* PE32+, two sections (.text with data, .bss empty), 1 KiB. */
#define LFANEW 0x40
#define COFF (LFANEW + 4)
#define OPT (COFF + 20)
#define OPT_SIZE 240
#define SIZE_OF_HEADERS 0x200
#define SECTIONS (OPT + OPT_SIZE)
#define SIZE 0x400

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, (uint16_t)v);
    put16(p + 2, (uint16_t)(v >> 16));
}

static void build(uint8_t *im)
{
    memset(im, 0, SIZE);
    im[0] = 'M';
    im[1] = 'Z';
    put32(im + 0x3c, LFANEW);
    memcpy(im + LFANEW, "PE\0\0", 4);
    put16(im + COFF, 0x8664);
    put16(im + COFF + 2, 2);
    put16(im + COFF + 16, OPT_SIZE);
    put16(im + OPT, 0x20b);
    put32(im + OPT + 60, SIZE_OF_HEADERS);
    put16(im + OPT + 70, 0x0160);                /* DllCharacteristics */
    put32(im + OPT + 108, 16);
    memcpy(im + SECTIONS, ".text", 5);
    put32(im + SECTIONS + 8, 0x10);              /* VirtualSize */
    put32(im + SECTIONS + 16, 0x200);
    put32(im + SECTIONS + 20, 0x200);
    put32(im + SECTIONS + 36, 0x60000020);
    memcpy(im + SECTIONS + 40, ".bss", 4);
    put32(im + SECTIONS + 40 + 36, 0xc0000080);
    for (size_t i = SIZE_OF_HEADERS; i < SIZE; i++)
        im[i] = (uint8_t)i;
}

static int image_fd(void)
{
    static uint8_t im[SIZE];
    int fd = memfd_create("pe", MFD_CLOEXEC);

    build(im);
    if (fd < 0 || write(fd, im, sizeof(im)) != (ssize_t)sizeof(im))
        abort();
    return fd;
}

int main(void)
{
    rs_image img;
    rs_error err;
    pe_section_header h;
    rs_bytes text = { 0 }, none = { 0 };

    if (rs_image_open_fd(&img, image_fd(), "pe", &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    CHECK(pe_image_section_count(&img) == 2);
    CHECK(pe_image_dll_characteristics(&img) == 0x0160);
    pe_image_section_header(&img, 0, &h);
    CHECK(memcmp(h.name, ".text\0\0\0", 8) == 0);
    CHECK(h.virtual_size == 0x10 && h.raw_size == 0x200 && h.raw_offset == 0x200);
    CHECK(h.characteristics == 0x60000020 && h.relocations == 0 && h.relocations_offset == 0);
    pe_image_section_header(&img, 1, &h);
    CHECK(memcmp(h.name, ".bss\0\0\0\0", 8) == 0 && h.raw_size == 0 && h.characteristics == 0xc0000080);
    CHECK(pe_image_section(&img, ".text", &text, &err) == 1);
    CHECK(text.len == 0x10 && text.data[0] == 0x00 && text.data[15] == 0x0f);
    CHECK(pe_image_section(&img, ".sbat", &none, &err) == 0 && none.len == 0);
    rs_bytes_free(&text);
    rs_image_close(&img);
    return harness_finish("test_pe_sections");
}

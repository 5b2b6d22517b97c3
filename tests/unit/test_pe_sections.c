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
#include "pe_test_image.h"

/* The base image with a second, empty section (.bss), DllCharacteristics
 * and a VirtualSize below .text's raw size, in a memfd. */
static int image_fd(void)
{
    image im = base_image(BASE_SIZE);
    int fd = memfd_create("pe", MFD_CLOEXEC);

    pe_put_le16(im.data + COFF + 2, 2);
    pe_put_le16(im.data + OPT + 70, 0x0160);
    pe_put_le32(im.data + SECTIONS + 8, 0x10);
    pe_put_le32(im.data + SECTIONS + 36, 0x60000020);
    memcpy(im.data + SECTIONS + 40, ".bss", 4);
    pe_put_le32(im.data + SECTIONS + 40 + 36, 0xc0000080);
    if (fd < 0 || write(fd, im.data, im.len) != (ssize_t)im.len)
        abort();
    free(im.data);
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

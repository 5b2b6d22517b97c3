/* A small well-formed PE32+ image for unit tests to start from: one
 * section of 0x200 bytes at 0x200, 1 KiB in all. */
#ifndef RS_PE_TEST_IMAGE_H
#define RS_PE_TEST_IMAGE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/pe/pe_layout.h"

/* The layout of the base image: PE32+, one section, 1 KiB. */
#define LFANEW 0x40
#define COFF (LFANEW + 4)
#define OPT (COFF + 20)
#define OPT_SIZE 240
#define SIZE_OF_HEADERS 0x200
#define SECTIONS (OPT + OPT_SIZE)
#define CERT_DIR (OPT + 112 + 4 * 8)
#define BASE_SIZE 0x400

typedef struct image {
    uint8_t *data;
    size_t len;
} image;

static inline image base_image(size_t len)
{
    /* Built at full size, then cut, so short images are truncations. */
    image im = { calloc(1, len > BASE_SIZE ? len : BASE_SIZE), len };

    if (!im.data)
        abort();
    im.data[0] = 'M';
    im.data[1] = 'Z';
    pe_put_le32(im.data + 0x3c, LFANEW);
    memcpy(im.data + LFANEW, "PE\0\0", 4);
    pe_put_le16(im.data + COFF, 0x8664);
    pe_put_le16(im.data + COFF + 2, 1);
    pe_put_le16(im.data + COFF + 16, OPT_SIZE);
    pe_put_le16(im.data + OPT, 0x20b);
    pe_put_le32(im.data + OPT + 60, SIZE_OF_HEADERS);
    pe_put_le32(im.data + OPT + 108, 16);
    memcpy(im.data + SECTIONS, ".text", 5);
    pe_put_le32(im.data + SECTIONS + 16, 0x200);
    pe_put_le32(im.data + SECTIONS + 20, 0x200);
    for (size_t i = SIZE_OF_HEADERS; i < BASE_SIZE && i < len; i++)
        im.data[i] = (uint8_t)i;
    return im;
}

#endif

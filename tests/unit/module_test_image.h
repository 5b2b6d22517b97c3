/* A small well-formed kernel module for unit tests: an ELF64 relocatable
 * object (ET_REL) with one section of 64 bytes after the header and the
 * section header table (a null entry and that section) at the end, 256
 * bytes in all. The module format needs no more (formats/module). */
#ifndef RS_MODULE_TEST_IMAGE_H
#define RS_MODULE_TEST_IMAGE_H

#include <stdint.h>
#include <string.h>

#define MODULE_IMAGE_SIZE 256

static inline void module_put64(uint8_t *p, uint64_t v, size_t len)
{
    for (size_t i = 0; i < len; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* fill: the section's bytes, so two modules can differ. */
static inline void module_image(uint8_t out[MODULE_IMAGE_SIZE], uint8_t fill)
{
    uint8_t *sh = out + 128 + 64;   /* the second section header */

    memset(out, 0, MODULE_IMAGE_SIZE);
    memcpy(out, "\177ELF", 4);
    out[4] = 2;                     /* ELFCLASS64 */
    out[5] = 1;                     /* little-endian */
    out[6] = 1;                     /* EV_CURRENT */
    module_put64(out + 16, 1, 2);   /* ET_REL */
    module_put64(out + 18, 62, 2);  /* EM_X86_64 */
    module_put64(out + 20, 1, 4);
    module_put64(out + 0x28, 128, 8);  /* e_shoff */
    module_put64(out + 0x34, 64, 2);   /* e_ehsize */
    module_put64(out + 0x3a, 64, 2);   /* e_shentsize */
    module_put64(out + 0x3c, 2, 2);    /* e_shnum */
    memset(out + 64, fill, 64);
    module_put64(sh + 4, 1, 4);        /* SHT_PROGBITS */
    module_put64(sh + 24, 64, 8);      /* sh_offset */
    module_put64(sh + 32, 64, 8);      /* sh_size */
}

#endif

#include "formats/module/module_elf.h"

#include <string.h>

#define EI_NIDENT 16
#define ET_REL 1
#define SHT_NOBITS 8

/* The fields we read, at their offsets in the 32- and 64-bit layouts. */
typedef struct elf_shape {
    size_t ehdr_size, shoff, shoff_size, shentsize, shnum;
    size_t shdr_size, sh_type, sh_offset, sh_size, word;
} elf_shape;

static const elf_shape elf32 = { 52, 0x20, 4, 0x2e, 0x30, 40, 4, 16, 20, 4 };
static const elf_shape elf64 = { 64, 0x28, 8, 0x3a, 0x3c, 64, 4, 24, 32, 8 };

static const uint8_t elf_magic[] = { 0x7f, 'E', 'L', 'F' };

typedef struct elf_file {
    const rs_input *in;
    uint64_t len;
    const elf_shape *shape;
    bool big_endian;
} elf_file;

bool module_elf_magic(const uint8_t *head, size_t n)
{
    return n >= sizeof(elf_magic) && memcmp(head, elf_magic, sizeof(elf_magic)) == 0;
}

static uint64_t get_uint(const elf_file *elf, const uint8_t *p, size_t len)
{
    uint64_t v = 0;

    for (size_t i = 0; i < len; i++)
        v |= (uint64_t)p[elf->big_endian ? len - 1 - i : i] << (8 * i);
    return v;
}

static int read_ident(elf_file *elf, uint8_t *h, rs_error *err)
{
    if (elf->len < elf32.ehdr_size || rs_input_read(elf->in, 0, h, EI_NIDENT + 2, err) < 0 ||
        !module_elf_magic(h, EI_NIDENT))
        return rs_fail(err, "not an ELF object");
    if ((h[4] != 1 && h[4] != 2) || (h[5] != 1 && h[5] != 2))
        return rs_fail(err, "ELF header has an unknown class or byte order");
    elf->shape = h[4] == 2 ? &elf64 : &elf32;
    elf->big_endian = h[5] == 2;
    if (get_uint(elf, h + EI_NIDENT, 2) != ET_REL)
        return rs_fail(err, "ELF file is not a relocatable object (ET_REL), so not a kernel module");
    return 0;
}

/* Where one section's file bytes end (0 for sections with none). */
static int section_end(const elf_file *elf, const uint8_t *sh, uint64_t *end, rs_error *err)
{
    const elf_shape *s = elf->shape;
    uint64_t off, size;

    off = get_uint(elf, sh + s->sh_offset, s->word);
    size = get_uint(elf, sh + s->sh_size, s->word);
    *end = 0;
    if (get_uint(elf, sh + s->sh_type, 4) == SHT_NOBITS || size == 0)
        return 0;
    if (off > elf->len || size > elf->len - off)
        return rs_fail(err, "ELF section runs past the module bytes (truncated file?)");
    *end = off + size;
    return 0;
}

/* The kernel's elf_validity_ehdr(): a table entry is exactly one
 * Elf_Shdr, and the table, e_shnum of them, lies inside the file. */
static int table_extent(const elf_file *elf, const uint8_t *h, uint64_t *shoff, uint64_t *shnum, rs_error *err)
{
    const elf_shape *s = elf->shape;
    uint64_t shentsize = get_uint(elf, h + s->shentsize, 2);

    *shoff = get_uint(elf, h + s->shoff, s->shoff_size);
    *shnum = get_uint(elf, h + s->shnum, 2);
    if (shentsize != s->shdr_size)
        return rs_fail(err, "ELF e_shentsize is %llu, not %zu (the kernel refuses such a module)",
                       (unsigned long long)shentsize, s->shdr_size);
    if (*shnum == 0)
        return rs_fail(err, "ELF object has no section header table");
    if (*shoff > elf->len || *shnum * s->shdr_size > elf->len - *shoff)
        return rs_fail(err, "ELF section headers run past the module bytes (truncated file?)");
    return 0;
}

/* Section headers read a window at a time: what the check holds does
 * not grow with e_shnum (docs/security.md, the socket's memory). */
#define TABLE_WINDOW 64

int module_elf_check(const rs_input *in, uint64_t len, rs_error *err)
{
    elf_file elf = { .in = in, .len = len };
    uint8_t h[64], table[TABLE_WINDOW * 64];
    uint64_t shoff, shnum, extent, end;

    if (read_ident(&elf, h, err) < 0)
        return -1;
    if (len < elf.shape->ehdr_size || rs_input_read(in, 0, h, elf.shape->ehdr_size, err) < 0)
        return rs_fail(err, "truncated ELF header");
    if (table_extent(&elf, h, &shoff, &shnum, err) < 0)
        return -1;
    extent = shoff + shnum * elf.shape->shdr_size;
    for (uint64_t i = 0; i < shnum; i += TABLE_WINDOW) {
        uint64_t n = shnum - i < TABLE_WINDOW ? shnum - i : TABLE_WINDOW;

        if (rs_input_read(in, shoff + i * elf.shape->shdr_size, table, n * elf.shape->shdr_size, err) < 0)
            return -1;
        for (uint64_t j = 0; j < n; j++) {
            if (section_end(&elf, table + j * elf.shape->shdr_size, &end, err) < 0)
                return -1;
            extent = end > extent ? end : extent;
        }
    }
    if (extent < len)
        return rs_fail(err, "%llu unexpected bytes after the ELF object (a damaged signature trailer?)",
                       (unsigned long long)(len - extent));
    return 0;
}

#include "uefi/sbat.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/pe/pe_sections.h"
#include "uefi/efi.h"

#define LEVEL_HEADER 12
/* Debian's GRUB carries about 300 bytes of SBAT and shim's file
 * alignment pads it to 4 KiB; 1 MiB is far beyond any real section. */
#define MAX_SBAT_SECTION (1u << 20)

void sbat_image_free(sbat_image *s)
{
    free(s->sbat);
    free(s->previous);
    free(s->latest);
    s->sbat = s->previous = s->latest = NULL;
}

static char *string_at(const rs_bytes *b, size_t off)
{
    const uint8_t *nul;

    if (off >= b->len)
        return NULL;
    nul = memchr(b->data + off, '\0', b->len - off);
    return strndup((const char *)b->data + off, nul ? (size_t)(nul - (b->data + off)) : b->len - off);
}

static int parse_level(const rs_bytes *sec, sbat_image *s, rs_error *err)
{
    uint32_t prev, latest;

    if (sec->len < LEVEL_HEADER)
        return rs_fail(err, ".sbatlevel section is too short (%zu bytes)", sec->len);
    prev = efi_le32(sec->data + 4);
    latest = efi_le32(sec->data + 8);
    if ((uint64_t)prev + 4 >= sec->len || (uint64_t)latest + 4 >= sec->len)
        return rs_fail(err, ".sbatlevel offsets %u and %u lie outside the section (%zu bytes)", prev, latest,
                       sec->len);
    s->previous = string_at(sec, (size_t)prev + 4);
    s->latest = string_at(sec, (size_t)latest + 4);
    if (!s->previous || !s->latest)
        return rs_fail(err, "out of memory");
    return 0;
}

int sbat_from_image(rs_image *img, sbat_image *s, rs_error *err)
{
    _cleanup_bytes_ rs_bytes sec = { 0 }, level = { 0 };
    int found;

    memset(s, 0, sizeof(*s));
    found = pe_image_section(img, ".sbat", &sec, err);
    if (found < 0)
        return -1;
    if (found && !(s->sbat = string_at(&sec, 0)) && sec.len)
        return rs_fail(err, "out of memory");
    found = pe_image_section(img, ".sbatlevel", &level, err);
    if (found < 0)
        return -1;
    return found ? parse_level(&level, s, err) : 0;
}

int sbat_image_load(const char *path, sbat_image *s, rs_error *err)
{
    _cleanup_image_ rs_image img = { .in.fd = -1 };

    if (rs_image_open(&img, path, err) < 0)
        return -1;
    if (sbat_from_image(&img, s, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

/* pe.c/verify.c verify_buffer_sbat: shim walks the section headers for
 * the exact 8-byte name ".sbat"; two such sections, or relocations in one,
 * are unsupported; a section whose SizeOfRawData is 0 or below its
 * VirtualSize is ignored; otherwise the whole raw data is the CSV (it ends
 * at the first NUL). */
static int refuse(sbat_section *out, const char *why)
{
    snprintf(out->refusal, sizeof(out->refusal), "%s", why);
    return 0;
}

/* The whole raw data of a .sbat section; the CSV ends at the first NUL. */
static int read_csv(rs_image *img, const pe_section_header *h, sbat_section *out, rs_error *err)
{
    uint8_t *buf;

    buf = malloc((size_t)h->raw_size + 1);
    if (!buf)
        return rs_fail(err, "out of memory");
    if (rs_input_read(&img->in, h->raw_offset, buf, h->raw_size, err) < 0) {
        free(buf);
        return -1;
    }
    buf[h->raw_size] = '\0';
    free(out->csv);
    out->csv = (char *)buf;
    return 0;
}

int sbat_shim_section(rs_image *img, sbat_section *out, rs_error *err)
{
    bool seen = false;

    memset(out, 0, sizeof(*out));
    if (img->format != &rs_format_pe)
        return rs_fail(err, "not a PE/COFF image");
    for (size_t i = 0; i < pe_image_section_count(img); i++) {
        pe_section_header h;

        pe_image_section_header(img, i, &h);
        if (memcmp(h.name, ".sbat\0\0\0", 8) != 0)
            continue;
        if (seen)
            return refuse(out, "the image has two .sbat sections");
        seen = true;
        if (h.relocations_offset != 0 || h.relocations != 0)
            return refuse(out, "the .sbat section has relocations");
        if (h.raw_size == 0 || h.raw_size < h.virtual_size)
            continue;
        if ((uint64_t)h.raw_offset + h.raw_size > img->in.size)
            return refuse(out, "the .sbat section lies past the end of the file");
        if (h.raw_size > MAX_SBAT_SECTION)
            return rs_fail(err, ".sbat section is %u bytes, more than the %u allowed", h.raw_size, MAX_SBAT_SECTION);
        if (read_csv(img, &h, out, err) < 0)
            return -1;
    }
    return 0;
}

void sbat_section_free(sbat_section *s)
{
    free(s->csv);
    s->csv = NULL;
}

#include "formats/pe/pe_sections.h"

#include <stdlib.h>
#include <string.h>

#include "formats/pe/pe_layout.h"

/* DllCharacteristics follows CheckSum (4 bytes) and Subsystem (2). */
#define DLL_CHARACTERISTICS_AFTER_CHECKSUM 6

static const pe_layout *layout(const rs_image *img)
{
    return img->priv;
}

size_t pe_image_section_count(const rs_image *img)
{
    return layout(img)->nsection_headers;
}

/* The section table lies inside the headers: pe_layout_parse checked it. */
void pe_image_section_header(const rs_image *img, size_t i, pe_section_header *out)
{
    const pe_layout *pe = layout(img);
    const uint8_t *h = pe->headers + pe->section_table + (uint64_t)i * PE_SECTION_HEADER;

    memcpy(out->name, h, sizeof(out->name));
    out->virtual_size = pe_le32(h + 8);
    out->raw_size = pe_le32(h + 16);
    out->raw_offset = pe_le32(h + 20);
    out->relocations_offset = pe_le32(h + 24);
    out->relocations = pe_le16(h + 32);
    out->characteristics = pe_le32(h + 36);
}

uint16_t pe_image_dll_characteristics(const rs_image *img)
{
    const pe_layout *pe = layout(img);

    return pe_le16(pe->headers + pe->checksum_off + DLL_CHARACTERISTICS_AFTER_CHECKSUM);
}

int pe_image_section(rs_image *img, const char *name, rs_bytes *out, rs_error *err)
{
    pe_range r;
    uint8_t *buf;

    if (img->format != &rs_format_pe)
        return rs_fail(err, "not a PE/COFF image");
    if (!pe_find_section(layout(img), &img->in, name, &r))
        return 0;
    buf = malloc(r.len ? r.len : 1);
    if (!buf)
        return rs_fail(err, "out of memory");
    if (rs_input_read(&img->in, r.off, buf, r.len, err) < 0) {
        free(buf);
        return -1;
    }
    rs_bytes_free(out);
    rs_bytes_adopt(out, buf, r.len);
    return 1;
}

void pe_image_headers(const rs_image *img, const uint8_t **data, size_t *len)
{
    *data = layout(img)->headers;
    *len = layout(img)->size_of_headers;
}

int pe_image_section_raw(rs_image *img, size_t i, size_t max, rs_bytes *out, uint64_t *off, rs_error *err)
{
    pe_section_header h;
    uint64_t len;
    uint8_t *buf;

    pe_image_section_header(img, i, &h);
    *off = h.raw_offset;
    len = h.raw_offset < img->in.size ? img->in.size - h.raw_offset : 0;
    len = h.raw_size < len ? h.raw_size : len;
    if (len > max)
        return rs_fail(err, "its raw data is %llu bytes, more than the %zu read at once", (unsigned long long)len, max);
    if (!(buf = malloc(len ? (size_t)len : 1)))
        return rs_fail(err, "out of memory");
    if (rs_input_read(&img->in, h.raw_offset, buf, (size_t)len, err) < 0) {
        free(buf);
        return -1;
    }
    rs_bytes_free(out);
    rs_bytes_adopt(out, buf, (size_t)len);
    return 0;
}

/* What the rest of reprosign may ask of an opened PE image's sections and
 * flags (shim's and firmware's rules in src/uefi read them), without
 * reaching into the format's own layout. Every function takes an image
 * the PE format opened (img->format == &rs_format_pe). */
#ifndef RS_PE_SECTIONS_H
#define RS_PE_SECTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "base/bytes.h"
#include "base/error.h"
#include "formats/format.h"

/* One section header as the image states it (PE/COFF IMAGE_SECTION_HEADER). */
typedef struct pe_section_header {
    uint8_t name[8];             /* as stored: NUL-padded, or "/N" for a long name */
    uint32_t virtual_size;
    uint32_t raw_size;           /* SizeOfRawData */
    uint32_t raw_offset;         /* PointerToRawData */
    uint32_t relocations_offset; /* PointerToRelocations */
    uint16_t relocations;        /* NumberOfRelocations */
    uint32_t characteristics;
} pe_section_header;

/* How many section headers the image has, empty sections included. */
size_t pe_image_section_count(const rs_image *img);
/* The i-th section header (i < pe_image_section_count). */
void pe_image_section_header(const rs_image *img, size_t i, pe_section_header *out);
/* The optional header's DllCharacteristics. */
uint16_t pe_image_dll_characteristics(const rs_image *img);
/* Reads a named section into out; names longer than 8 bytes are found
 * through the COFF string table, as GNU ld writes them. The data is cut
 * to VirtualSize when that is smaller (the rest is file-alignment
 * padding). Returns 1 when found, 0 when absent, -1 on error (including
 * "not a PE image"). */
int pe_image_section(rs_image *img, const char *name, rs_bytes *out, rs_error *err);
/* The headers as loaded: [0, SizeOfHeaders) of the file. Firmware copies
 * them into memory with the sections. */
void pe_image_headers(const rs_image *img, const uint8_t **data, size_t *len);
/* The i-th section's raw data as the file holds it (SizeOfRawData at
 * PointerToRawData, cut at the end of the file), whatever its name or
 * VirtualSize; *off is where it starts. More than max bytes is an error. */
int pe_image_section_raw(rs_image *img, size_t i, size_t max, rs_bytes *out, uint64_t *off, rs_error *err);

#endif

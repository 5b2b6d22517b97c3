/* The parts of a PE/COFF image that Authenticode cares about, validated.
 *
 * "Image data" is the file without its certificate table. The image as
 * signed is that data zero-padded to 8 bytes (sbsign pads before hashing,
 * and firmware requires the table to start 8-aligned). */
#ifndef RS_PE_LAYOUT_H
#define RS_PE_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/bytes.h"
#include "base/error.h"
#include "base/file.h"

#define PE_CERT_REVISION 0x0200
#define PE_CERT_TYPE_PKCS 0x0002
#define PE_CERT_HEADER 8
/* One IMAGE_SECTION_HEADER in the section table. */
#define PE_SECTION_HEADER 40

typedef struct pe_range {
    uint64_t off;
    uint64_t len;
} pe_range;

typedef struct pe_cert_entry {
    uint64_t off;           /* of the WIN_CERTIFICATE header */
    uint32_t length;        /* dwLength */
    uint16_t revision;
    uint16_t type;
    uint64_t span;          /* bytes up to the next entry (dwLength rounded up to 8, clipped) */
} pe_cert_entry;

typedef struct pe_layout {
    uint16_t machine;
    bool pe32plus;
    uint64_t checksum_off;      /* file offset of OptionalHeader.CheckSum */
    uint64_t certdir_off;       /* file offset of DataDirectory[4] */
    uint32_t size_of_headers;
    uint8_t *headers;           /* [0, size_of_headers) */
    uint32_t cert_off;          /* DataDirectory[4] as found */
    uint32_t cert_size;
    uint64_t data_end;          /* image data ends here (table start, or EOF) */
    uint64_t data_size;         /* data_end rounded up to 8 */
    pe_range *sections;         /* non-empty raw ranges, sorted by offset */
    size_t nsections;
    pe_range trailing;          /* hashed bytes after the sections; len 0 if none */
    /* Set by a digest that read all of [size_of_headers, data_end): the
     * checksum's sum over those bytes, so writing the signed image copies
     * them without reading them a second time. */
    bool data_summed;
    uint64_t data_sum;
    pe_cert_entry *certs;
    size_t ncerts;
    uint64_t section_table;     /* offset of the section headers within headers */
    uint32_t nsection_headers;  /* all of them, empty ones included */
} pe_layout;

bool pe_probe(const rs_input *in);
int pe_layout_parse(const rs_input *in, pe_layout *pe, rs_error *err);
void pe_layout_free(pe_layout *pe);
const char *pe_machine_name(uint16_t machine);
/* Finds a section header by name; names longer than 8 bytes are "/N"
 * references into the COFF string table, as GNU ld writes them. Sets out
 * to the raw data, cut to VirtualSize when that is smaller (the rest is
 * file-alignment padding). Returns 1 when found, 0 when absent. */
int pe_find_section(const pe_layout *pe, const rs_input *in, const char *name, pe_range *out);

static inline uint16_t pe_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t pe_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void pe_put_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void pe_put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline uint64_t pe_align8(uint64_t v)
{
    return (v + 7) & ~(uint64_t)7;
}

#endif

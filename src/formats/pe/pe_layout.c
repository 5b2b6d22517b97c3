#include "formats/pe/pe_layout.h"

#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"

#define DOS_HEADER 64
#define COFF_HEADER 20
#define CERT_DIR_INDEX 4
/* Real headers are a few KiB; this only stops a hostile SizeOfHeaders
 * from making us allocate the whole file. */
#define MAX_HEADERS (16u * 1024 * 1024)

struct opt_layout {
    uint32_t checksum;      /* offsets within the optional header */
    uint32_t num_rva;
    uint32_t data_dir;
};

static const struct opt_layout pe32 = { 64, 92, 96 };
static const struct opt_layout pe32plus = { 64, 108, 112 };

const char *pe_machine_name(uint16_t machine)
{
    switch (machine) {
    case 0x8664:
        return "x86_64";
    case 0x014c:
        return "ia32";
    case 0xaa64:
        return "aarch64";
    case 0x01c0:
    case 0x01c2:
    case 0x01c4:
        return "arm";
    case 0x5064:
        return "riscv64";
    case 0x6264:
        return "loongarch64";
    default:
        return NULL;
    }
}

bool pe_probe(const rs_input *in)
{
    uint8_t mz[2];

    return rs_input_read(in, 0, mz, 2, NULL) == 0 && mz[0] == 'M' && mz[1] == 'Z';
}

void pe_layout_free(pe_layout *pe)
{
    free(pe->headers);
    free(pe->sections);
    free(pe->certs);
    memset(pe, 0, sizeof(*pe));
}

/* The DOS header's pointer to the PE signature, then the COFF header:
 * machine, number of sections, optional header size. Sets *opt_off to the
 * optional header's offset. */
static int parse_coff(const rs_input *in, pe_layout *pe, uint32_t *nsections, uint16_t *opt_size, uint64_t *opt_off,
                      rs_error *err)
{
    uint8_t dos[DOS_HEADER], nt[4 + COFF_HEADER];
    uint32_t lfanew;

    if (in->size < DOS_HEADER)
        return rs_fail(err, "too small for a DOS header (%llu bytes)", (unsigned long long)in->size);
    if (rs_input_read(in, 0, dos, sizeof(dos), err) < 0)
        return -1;
    lfanew = pe_le32(dos + 0x3c);
    if (rs_input_read(in, lfanew, nt, sizeof(nt), NULL) < 0)
        return rs_fail(err, "PE header offset 0x%x is outside the file", lfanew);
    if (memcmp(nt, "PE\0\0", 4) != 0)
        return rs_fail(err, "no PE signature at offset 0x%x", lfanew);
    pe->machine = pe_le16(nt + 4);
    if (!pe_machine_name(pe->machine))
        return rs_fail(err, "unsupported machine type 0x%04x", pe->machine);
    *nsections = pe_le16(nt + 6);
    *opt_size = pe_le16(nt + 20);
    *opt_off = (uint64_t)lfanew + sizeof(nt);
    return 0;
}

/* PE32 or PE32+, by the optional header's magic. */
static int optional_layout(const rs_input *in, uint64_t opt_off, pe_layout *pe, const struct opt_layout **opt,
                           rs_error *err)
{
    uint8_t magic[2];

    if (rs_input_read(in, opt_off, magic, 2, NULL) < 0)
        return rs_fail(err, "optional header is outside the file");
    if (pe_le16(magic) == 0x10b)
        *opt = &pe32;
    else if (pe_le16(magic) == 0x20b)
        *opt = &pe32plus;
    else
        return rs_fail(err, "unknown optional header magic 0x%04x", pe_le16(magic));
    pe->pe32plus = *opt == &pe32plus;
    return 0;
}

/* Reads the fixed headers up to the data directory. */
static int parse_headers(const rs_input *in, pe_layout *pe, uint32_t *nsections, uint64_t *section_table,
                         rs_error *err)
{
    const struct opt_layout *opt = NULL;
    uint8_t field[4];
    uint64_t opt_off = 0;
    uint16_t opt_size = 0;
    uint32_t num_rva;

    if (parse_coff(in, pe, nsections, &opt_size, &opt_off, err) < 0 || optional_layout(in, opt_off, pe, &opt, err) < 0)
        return -1;
    if (opt_size < opt->data_dir + (CERT_DIR_INDEX + 1) * 8)
        return rs_fail(err, "optional header (%u bytes) too small to hold the certificate table entry", opt_size);
    if (rs_input_read(in, opt_off + opt->num_rva, field, 4, NULL) < 0)
        return rs_fail(err, "optional header is truncated");
    num_rva = pe_le32(field);
    if (num_rva <= CERT_DIR_INDEX)
        return rs_fail(err, "no certificate table entry (NumberOfRvaAndSizes is %u)", num_rva);
    if (rs_input_read(in, opt_off + 60, field, 4, NULL) < 0)
        return rs_fail(err, "optional header is truncated");
    pe->size_of_headers = pe_le32(field);
    pe->checksum_off = opt_off + opt->checksum;
    pe->certdir_off = opt_off + opt->data_dir + CERT_DIR_INDEX * 8;
    *section_table = opt_off + opt_size;
    return 0;
}

/* The certificate table, if any, must be the 8-aligned tail of the file:
 * that is where the digest rules assume it, and where we append. */
static int locate_cert_table(const rs_input *in, pe_layout *pe, rs_error *err)
{
    pe->cert_off = pe_le32(pe->headers + pe->certdir_off);
    pe->cert_size = pe_le32(pe->headers + pe->certdir_off + 4);
    pe->data_end = in->size;
    if (pe->cert_size == 0)
        return 0;
    if ((uint64_t)pe->cert_off + pe->cert_size > in->size)
        return rs_fail(err, "certificate table (offset 0x%x, %u bytes) extends past the end of the file",
                       pe->cert_off, pe->cert_size);
    if ((uint64_t)pe->cert_off + pe->cert_size != in->size)
        return rs_fail(err, "certificate table (offset 0x%x, %u bytes) is not at the end of the file",
                       pe->cert_off, pe->cert_size);
    if (pe->cert_off % 8 != 0)
        return rs_fail(err, "certificate table offset 0x%x is not 8-byte aligned", pe->cert_off);
    if (pe->cert_off < pe->size_of_headers)
        return rs_fail(err, "certificate table (offset 0x%x) overlaps the headers", pe->cert_off);
    pe->data_end = pe->cert_off;
    return 0;
}

static int parse_cert_entries(const rs_input *in, pe_layout *pe, rs_error *err)
{
    uint64_t pos = pe->cert_off, end = (uint64_t)pe->cert_off + pe->cert_size;

    if (pe->cert_size == 0)
        return 0;
    pe->certs = calloc(pe->cert_size / PE_CERT_HEADER + 1, sizeof(*pe->certs));
    if (!pe->certs)
        return rs_fail(err, "out of memory");
    while (pos < end) {
        uint8_t h[PE_CERT_HEADER];
        pe_cert_entry *c = &pe->certs[pe->ncerts];

        if (end - pos < PE_CERT_HEADER)
            return rs_fail(err, "certificate table has %llu stray bytes at offset 0x%llx",
                           (unsigned long long)(end - pos), (unsigned long long)pos);
        if (rs_input_read(in, pos, h, sizeof(h), err) < 0)
            return -1;
        c->off = pos;
        c->length = pe_le32(h);
        c->revision = pe_le16(h + 4);
        c->type = pe_le16(h + 6);
        if (c->length <= PE_CERT_HEADER || c->length > end - pos)
            return rs_fail(err, "certificate entry at offset 0x%llx has invalid length %u",
                           (unsigned long long)pos, c->length);
        c->span = pe_align8(c->length) < end - pos ? pe_align8(c->length) : end - pos;
        pe->ncerts++;
        pos += c->span;
    }
    return 0;
}

static int cmp_range(const void *a, const void *b)
{
    const pe_range *x = a, *y = b;

    return x->off < y->off ? -1 : x->off > y->off;
}

static bool overlaps(uint64_t off, uint64_t len, uint64_t field, uint64_t field_len)
{
    return off < field + field_len && field < off + len;
}

/* One section header's raw range, checked (len 0: an empty section). */
static int section_range(const pe_layout *pe, uint32_t i, const uint8_t *s, pe_range *r, rs_error *err)
{
    uint64_t raw_size = pe_le32(s + 16), raw_off = pe_le32(s + 20);

    *r = (pe_range){ raw_off, raw_size };
    if (raw_size == 0)
        return 0;
    if (raw_off + raw_size > pe->data_end)
        return rs_fail(err, "section %u (%.8s) at 0x%llx+0x%llx extends past the image data (0x%llx)", i,
                       (const char *)s, (unsigned long long)raw_off, (unsigned long long)raw_size,
                       (unsigned long long)pe->data_end);
    /* Signing rewrites these fields, so a section that hashes them
     * could never match its own signature. */
    if (overlaps(raw_off, raw_size, pe->checksum_off, 4) || overlaps(raw_off, raw_size, pe->certdir_off, 8))
        return rs_fail(err, "section %u (%.8s) at 0x%llx+0x%llx overlaps the CheckSum or certificate table fields",
                       i, (const char *)s, (unsigned long long)raw_off, (unsigned long long)raw_size);
    return 0;
}

/* Gaps between sections are unhashed by design (EDK2, sbsign), and the
 * loader never maps them. A tail that nothing hashes is different: it
 * could carry anything. The check runs to data_size, not data_end,
 * because signing writes the padding and the signed image must pass this
 * check too. */
static int check_tail(pe_layout *pe, uint64_t sum, uint64_t covered, rs_error *err)
{
    if (sum < pe->data_size) {
        pe->trailing = (pe_range){ sum, pe->data_size - sum };
        covered = pe->data_size;
    }
    if (covered < pe->data_size)
        return rs_fail(err, "bytes 0x%llx-0x%llx at the end are not covered by the Authenticode digest "
                       "(overlapping sections?)", (unsigned long long)covered, (unsigned long long)pe->data_size);
    return 0;
}

static int parse_sections(pe_layout *pe, uint32_t n, uint64_t table, rs_error *err)
{
    uint64_t sum = pe->size_of_headers, covered = pe->size_of_headers;

    if (table + (uint64_t)n * PE_SECTION_HEADER > pe->size_of_headers)
        return rs_fail(err, "section table (%u sections) extends past SizeOfHeaders (0x%x)", n,
                       pe->size_of_headers);
    pe->sections = calloc(n ? n : 1, sizeof(*pe->sections));
    if (!pe->sections)
        return rs_fail(err, "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        pe_range r;

        if (section_range(pe, i, pe->headers + table + (uint64_t)i * PE_SECTION_HEADER, &r, err) < 0)
            return -1;
        if (r.len == 0)
            continue;
        pe->sections[pe->nsections++] = r;
        sum += r.len;
        if (r.off + r.len > covered)
            covered = r.off + r.len;
    }
    qsort(pe->sections, pe->nsections, sizeof(*pe->sections), cmp_range);
    return check_tail(pe, sum, covered, err);
}

int pe_layout_parse(const rs_input *in, pe_layout *pe, rs_error *err)
{
    uint32_t nsections = 0;
    uint64_t section_table = 0;

    memset(pe, 0, sizeof(*pe));
    if (parse_headers(in, pe, &nsections, &section_table, err) < 0)
        return -1;
    if (pe->size_of_headers > in->size || pe->size_of_headers > MAX_HEADERS)
        return rs_fail(err, "SizeOfHeaders 0x%x is larger than the file", pe->size_of_headers);
    if (pe->certdir_off + 8 > pe->size_of_headers)
        return rs_fail(err, "data directory lies outside SizeOfHeaders (0x%x)", pe->size_of_headers);
    pe->headers = malloc(pe->size_of_headers);
    if (!pe->headers)
        return rs_fail(err, "out of memory");
    if (rs_input_read(in, 0, pe->headers, pe->size_of_headers, err) < 0)
        return -1;
    if (locate_cert_table(in, pe, err) < 0)
        return -1;
    pe->data_size = pe_align8(pe->data_end);
    if (parse_sections(pe, nsections, section_table, err) < 0)
        return -1;
    pe->section_table = section_table;
    pe->nsection_headers = nsections;
    return parse_cert_entries(in, pe, err);
}

/* The full name of a section: inline, or "/N" = offset N in the string
 * table that follows the COFF symbol table. */
static bool section_name_is(const pe_layout *pe, const rs_input *in, const uint8_t *s, const char *name)
{
    size_t n = strlen(name);
    char buf[64];
    uint64_t strtab, off = 0;
    const uint8_t *coff;

    if (s[0] != '/')
        return n <= 8 && memcmp(s, name, n) == 0 && (n == 8 || s[n] == '\0');
    for (int i = 1; i < 8 && s[i] >= '0' && s[i] <= '9'; i++)
        off = off * 10 + (uint64_t)(s[i] - '0');
    if (n >= sizeof(buf))
        return false;
    coff = pe->headers + pe_le32(pe->headers + 0x3c) + 4;
    strtab = (uint64_t)pe_le32(coff + 8) + (uint64_t)pe_le32(coff + 12) * 18;
    if (rs_input_read(in, strtab + off, buf, n + 1, NULL) < 0)
        return false;
    return memcmp(buf, name, n) == 0 && buf[n] == '\0';
}

int pe_find_section(const pe_layout *pe, const rs_input *in, const char *name, pe_range *out)
{
    for (uint32_t i = 0; i < pe->nsection_headers; i++) {
        const uint8_t *s = pe->headers + pe->section_table + (uint64_t)i * PE_SECTION_HEADER;
        uint32_t vsize = pe_le32(s + 8), raw_size = pe_le32(s + 16);

        if (!section_name_is(pe, in, s, name))
            continue;
        out->off = pe_le32(s + 20);
        out->len = vsize && vsize < raw_size ? vsize : raw_size;
        return 1;
    }
    return 0;
}

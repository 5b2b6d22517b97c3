#include "uefi/kernel_certs.h"

#include <openssl/err.h>
#include <stdlib.h>
#include <string.h>

#include "archive/decompress.h"
#include "base/cleanup.h"
#include "base/file.h"
#include "crypto/ossl.h"
#include "uefi/efi.h"

/* The setup header (boot.rst): where it is, and what of it is read. */
#define SETUP_SECTS 0x1f1
#define BOOT_FLAG 0x1fe
#define HEADER_MAGIC 0x202
#define HEADER_VERSION 0x206
#define PAYLOAD_OFFSET 0x248
#define PAYLOAD_LENGTH 0x24c
#define HEADER_END 0x250
/* payload_offset and payload_length came with boot protocol 2.08 (Linux 2.6.26). */
#define PAYLOAD_PROTOCOL 0x0208
/* The Image headers' magic at 0x38: "ARM\x64" (arm64's booting.rst),
 * "RSC\x05" (riscv's boot-image-header.rst). */
#define IMAGE_MAGIC 0x38
/* EFI zboot (drivers/firmware/efi/libstub/zboot-header.S): "zimg" at 4,
 * the compressed payload's offset and size, and the compression's name. */
#define ZBOOT_TYPE 4
#define ZBOOT_PAYLOAD_OFFSET 8
#define ZBOOT_PAYLOAD_SIZE 12
#define ZBOOT_COMP_TYPE 24

static void kernel_list_scan_freep(kernel_list_scan **s)
{
    kernel_list_scan_free(*s);
}

/* Where the kernel is in the image, and how it is compressed. Linux's
 * Makefiles append the decompressed size as 4 little-endian bytes to an
 * xz or zstd stream (size_append); gzip ends with that size itself. An
 * arm64 or RISC-V Image is the kernel itself, uncompressed. */
typedef struct payload {
    uint64_t off, len;       /* the kernel's bytes in the image */
    bool compressed;
    uint32_t decompressed;   /* then its size, mod 2^32, as the image gives it */
} payload;

/* The compressed kernel at off: len bytes, its size word (or gzip's own
 * size field) the last 4 of them. `header` names what gave them. */
static int compressed_payload(const rs_input *in, uint64_t off, uint64_t len, const char *header, payload *pl,
                              rs_error *err)
{
    uint8_t magic[6], tail[4];

    if (off > in->size || len > in->size - off || len < sizeof(magic) + sizeof(tail))
        return rs_fail(err, "its %s payload (%llu bytes at %llu) does not fit in its %llu bytes", header,
                       (unsigned long long)len, (unsigned long long)off, (unsigned long long)in->size);
    if (rs_input_read(in, off, magic, sizeof(magic), err) < 0 ||
        rs_input_read(in, off + len - sizeof(tail), tail, sizeof(tail), err) < 0)
        return -1;
    *pl = (payload){ .off = off, .len = len, .compressed = true, .decompressed = efi_le32(tail) };
    if (!memcmp(magic, "\x1f\x8b", 2))
        return 1;
    pl->len -= sizeof(tail);
    if (!memcmp(magic, "\xfd" "7zXZ\0", 6) || !memcmp(magic, "\x28\xb5\x2f\xfd", 4))
        return 1;
    return rs_fail(err, "its kernel is compressed with neither xz, zstd nor gzip "
                        "(it starts %02x %02x %02x %02x): give its certificates with --kernel-keys",
                   magic[0], magic[1], magic[2], magic[3]);
}

static int find_bzimage_payload(const rs_input *in, const uint8_t *h, payload *pl, rs_error *err)
{
    uint64_t setup;

    if (efi_le16(h + HEADER_VERSION) < PAYLOAD_PROTOCOL)
        return rs_fail(err, "boot protocol %u.%02u has no payload fields (2.08 added them)",
                       h[HEADER_VERSION + 1], h[HEADER_VERSION]);
    setup = h[SETUP_SECTS] ? h[SETUP_SECTS] : 4;
    return compressed_payload(in, (setup + 1) * 512 + efi_le32(h + PAYLOAD_OFFSET), efi_le32(h + PAYLOAD_LENGTH),
                              "setup header's", pl, err);
}

/* Makefile.zboot appends the size word after the payload the header
 * counts (ZBOOT_SIZE_LEN), except to gzip, which ends with its own. */
static int find_zboot_payload(const rs_input *in, const uint8_t *h, payload *pl, rs_error *err)
{
    const char *type = (const char *)h + ZBOOT_COMP_TYPE;
    uint64_t len = efi_le32(h + ZBOOT_PAYLOAD_SIZE);

    if (!memchr(type, '\0', IMAGE_MAGIC - ZBOOT_COMP_TYPE))
        return rs_fail(err, "its EFI zboot header's compression type is not a string");
    return compressed_payload(in, efi_le32(h + ZBOOT_PAYLOAD_OFFSET), strcmp(type, "gzip") ? len + 4 : len,
                              "EFI zboot header's", pl, err);
}

/* 1 and where the kernel is, for an x86 bzImage, an EFI zboot image, or
 * an arm64 or RISC-V Image; 0 for anything else. */
typedef enum kernel_kind { NOT_A_KERNEL, BZIMAGE, ZBOOT, IMAGE } kernel_kind;

static kernel_kind kind_of(const uint8_t h[HEADER_END])
{
    if (!memcmp(h + HEADER_MAGIC, "HdrS", 4) && efi_le16(h + BOOT_FLAG) == 0xaa55)
        return BZIMAGE;
    if (!memcmp(h, "MZ", 2) && !memcmp(h + ZBOOT_TYPE, "zimg", 4))
        return ZBOOT;
    if (!memcmp(h + IMAGE_MAGIC, "ARM\x64", 4) || !memcmp(h + IMAGE_MAGIC, "RSC\x05", 4))
        return IMAGE;
    return NOT_A_KERNEL;
}

static int read_header(const rs_input *in, uint8_t h[HEADER_END], rs_error *err)
{
    if (in->size < HEADER_END)
        return 0;
    return rs_input_read(in, 0, h, HEADER_END, err) < 0 ? -1 : 1;
}

int kernel_image_header(const rs_input *in, rs_error *err)
{
    uint8_t h[HEADER_END];
    int r = read_header(in, h, err);

    return r <= 0 ? r : kind_of(h) != NOT_A_KERNEL;
}

static int find_payload(const rs_input *in, payload *pl, rs_error *err)
{
    uint8_t h[HEADER_END];
    int r = read_header(in, h, err);

    if (r <= 0)
        return r;
    switch (kind_of(h)) {
    case BZIMAGE:
        return find_bzimage_payload(in, h, pl, err);
    case ZBOOT:
        return find_zboot_payload(in, h, pl, err);
    case IMAGE:
        *pl = (payload){ .off = 0, .len = in->size };
        return 1;
    default:
        return 0;
    }
}

static int scan_block(void *ctx, const uint8_t *data, size_t len, rs_error *err)
{
    return kernel_list_scan_feed(ctx, data, len, err);
}

/* An uncompressed kernel is read a block at a time too. */
static int scan_image(const rs_input *in, const payload *pl, kernel_list_scan *scan, rs_error *err)
{
    _cleanup_free_ uint8_t *buf = malloc(RS_FILE_CHUNK);

    if (!buf)
        return rs_fail(err, "out of memory");
    for (uint64_t off = pl->off, end = pl->off + pl->len, n; off < end; off += n) {
        n = end - off < RS_FILE_CHUNK ? end - off : RS_FILE_CHUNK;
        if (rs_input_read(in, off, buf, (size_t)n, err) < 0 || kernel_list_scan_feed(scan, buf, (size_t)n, err) < 0)
            return -1;
    }
    return 0;
}

/* Errors name in->path, as the decompressor's do. */
static int read_certs(const rs_input *in, uint64_t limit, rs_trust *t, size_t *count, rs_error *err)
{
    _cleanup_(kernel_list_scan_freep) kernel_list_scan *scan = NULL;
    const uint8_t *list;
    uint64_t size, start;
    size_t len;
    payload pl;
    int r = find_payload(in, &pl, err);

    if (r <= 0)
        return r < 0 ? rs_error_prefix(err, "%s", in->path) : 0;
    if (!(scan = kernel_list_scan_new(KERNEL_MAX_CERT_LIST, err)))
        return rs_error_prefix(err, "%s", in->path);
    if (!pl.compressed) {
        if (scan_image(in, &pl, scan, err) < 0)
            return rs_error_prefix(err, "%s", in->path);
    } else if (rs_decompress_range_each(in, pl.off, pl.len, limit, scan_block, scan, &size, err) < 0)
        return -1;
    else if ((uint32_t)size != pl.decompressed)
        return rs_fail(err, "%s: its kernel decompressed to %llu bytes where the image says %lu", in->path,
                       (unsigned long long)size, (unsigned long)pl.decompressed);
    if (kernel_list_scan_end(scan, &list, &len, &start, err) < 0 || kernel_cert_list_add(list, len, t, count, err) < 0)
        return rs_error_prefix(err, "%s", in->path);
    return 1;
}

int kernel_image_certs(const char *path, uint64_t limit, rs_trust *t, size_t *count, rs_error *err)
{
    _cleanup_input_ rs_input in = { .fd = -1 };

    *count = 0;
    if (rs_input_open(&in, path, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return read_certs(&in, limit, t, count, err);
}

/* The last value of one attribute in a name, as its raw bytes, as the
 * kernel's x509_extract_name_segment keeps it (each one overwrites). */
static const ASN1_STRING *name_part(const X509_NAME *name, int nid)
{
    int at = -1, next;

    while ((next = X509_NAME_get_index_by_NID(name, nid, at)) >= 0)
        at = next;
    return at < 0 ? NULL : X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, at));
}

static void put_part(char **p, char *end, const ASN1_STRING *s)
{
    size_t n = (size_t)ASN1_STRING_length(s);

    if (n > (size_t)(end - *p))
        n = (size_t)(end - *p);
    memcpy(*p, ASN1_STRING_get0_data(s), n);
    *p += n;
}

/* x509_fabricate_name: the CN, unless an O that the CN does not begin
 * with (nor share its first 7 bytes with) goes before it as "O: CN";
 * else the O, else the e-mail address. */
static void kernel_subject(const X509_NAME *name, char **p, char *end)
{
    const ASN1_STRING *cn = name_part(name, NID_commonName), *o = name_part(name, NID_organizationName);
    const ASN1_STRING *mail = name_part(name, NID_pkcs9_emailAddress);

    if (cn && o) {
        int cl = ASN1_STRING_length(cn), ol = ASN1_STRING_length(o);
        const uint8_t *c = ASN1_STRING_get0_data(cn), *g = ASN1_STRING_get0_data(o);

        if (!(cl >= ol && !memcmp(c, g, (size_t)ol)) && !(cl >= 7 && ol >= 7 && !memcmp(c, g, 7))) {
            put_part(p, end, o);
            if (end - *p >= 2) {
                memcpy(*p, ": ", 2);
                *p += 2;
            }
        }
        put_part(p, end, cn);
    } else if (cn || o || mail)
        put_part(p, end, cn ? cn : o ? o : mail);
}

void kernel_key_description(X509 *cert, char *out, size_t size)
{
    const ASN1_OCTET_STRING *skid = X509_get0_subject_key_id(cert);
    unsigned char *serial = NULL;
    const unsigned char *id = NULL;
    char *p = out, *end = out + size - 1;
    int len, id_len = 0;

    if (!size)
        return;
    kernel_subject(X509_get_subject_name(cert), &p, end);
    /* The subject key identifier, else the serial number's content
     * octets as DER has them (a leading zero included). */
    if (skid) {
        id = ASN1_STRING_get0_data(skid);
        id_len = ASN1_STRING_length(skid);
    } else if ((len = i2d_ASN1_INTEGER(X509_get0_serialNumber(cert), &serial)) > 2) {
        int header = serial[1] & 0x80 ? 2 + (serial[1] & 0x7f) : 2;

        id = serial + header;
        id_len = len > header ? len - header : 0;
    }
    if (end - p >= 2) {
        memcpy(p, ": ", 2);
        p += 2;
    }
    for (int i = 0; i < id_len && end - p >= 2; i++, p += 2)
        snprintf(p, 3, "%02x", id[i]);
    *p = '\0';
    OPENSSL_free(serial);
}

#include "uefi/esl.h"

#include <string.h>

#define OWNER_SIZE 16
/* No real certificate is this large; a bigger size field is a lie. */
#define MAX_ENTRY (64u * 1024)

static const struct {
    const efi_guid *type;
    size_t size;             /* data bytes per entry; 0 = variable */
} fixed_sizes[] = {
    { &efi_guid_cert_sha1, 20 },
    { &efi_guid_cert_sha256, 32 },
    { &efi_guid_cert_sha384, 48 },
    { &efi_guid_cert_sha512, 64 },
    { &efi_guid_cert_x509_sha256, 32 + EFI_TIME_SIZE },
    { &efi_guid_cert_x509, 0 },
};

const EVP_MD *esl_hash_md(const efi_guid *type)
{
    if (efi_guid_equal(type, &efi_guid_cert_sha1))
        return EVP_sha1();
    if (efi_guid_equal(type, &efi_guid_cert_sha256))
        return EVP_sha256();
    if (efi_guid_equal(type, &efi_guid_cert_sha384))
        return EVP_sha384();
    if (efi_guid_equal(type, &efi_guid_cert_sha512))
        return EVP_sha512();
    return NULL;
}

/* Firmware refuses a known type whose entries have the wrong size. */
static int check_entry_size(const efi_guid *type, uint32_t sig_size, size_t list, rs_error *err)
{
    for (size_t i = 0; i < sizeof(fixed_sizes) / sizeof(fixed_sizes[0]); i++) {
        if (!efi_guid_equal(type, fixed_sizes[i].type))
            continue;
        if (fixed_sizes[i].size && sig_size != OWNER_SIZE + fixed_sizes[i].size)
            return rs_fail(err, "signature list %zu: %s entries must be %zu bytes, not %u", list,
                           efi_guid_name(type), OWNER_SIZE + fixed_sizes[i].size, sig_size);
    }
    return 0;
}

static int walk_list(const uint8_t *p, uint32_t list_size, size_t index, esl_visit visit, void *ctx,
                     rs_error *err)
{
    esl_entry e = { .list = index };
    uint32_t header_size = efi_le32(p + 20), sig_size = efi_le32(p + 24);
    uint64_t body;

    memcpy(e.type.b, p, 16);
    if ((uint64_t)ESL_HEADER + header_size > list_size)
        return rs_fail(err, "signature list %zu: header size %u does not fit in the list (%u bytes)", index,
                       header_size, list_size);
    body = list_size - ESL_HEADER - header_size;
    if (sig_size <= OWNER_SIZE || sig_size > MAX_ENTRY)
        return rs_fail(err, "signature list %zu: invalid signature size %u", index, sig_size);
    if (body == 0 || body % sig_size != 0)
        return rs_fail(err, "signature list %zu: %llu bytes of entries is not a multiple of the entry size %u",
                       index, (unsigned long long)body, sig_size);
    if (check_entry_size(&e.type, sig_size, index, err) < 0)
        return -1;
    p += ESL_HEADER + header_size;
    for (uint64_t off = 0; off < body; off += sig_size) {
        memcpy(e.owner.b, p + off, OWNER_SIZE);
        e.data = p + off + OWNER_SIZE;
        e.len = sig_size - OWNER_SIZE;
        if (visit && visit(ctx, &e, err) < 0)
            return -1;
    }
    return 0;
}

int esl_walk(const uint8_t *buf, size_t len, esl_visit visit, void *ctx, rs_error *err)
{
    size_t pos = 0, index = 0;

    while (pos < len) {
        uint32_t list_size;

        if (len - pos < ESL_HEADER)
            return rs_fail(err, "signature list %zu at offset %zu is truncated (%zu bytes left, header is %d)",
                           index, pos, len - pos, ESL_HEADER);
        list_size = efi_le32(buf + pos + 16);
        if (list_size < ESL_HEADER || list_size > len - pos)
            return rs_fail(err, "signature list %zu at offset %zu claims %u bytes, but %zu remain", index, pos,
                           list_size, len - pos);
        if (walk_list(buf + pos, list_size, index, visit, ctx, err) < 0)
            return -1;
        pos += list_size;
        index++;
    }
    return 0;
}

static int append_header(rs_bytes *out, const efi_guid *type, uint64_t list_size, size_t sig_size, rs_error *err)
{
    uint8_t h[ESL_HEADER];

    if (list_size > UINT32_MAX || sig_size > MAX_ENTRY)
        return rs_fail(err, "signature list too large");
    memcpy(h, type->b, 16);
    efi_put32(h + 16, (uint32_t)list_size);
    efi_put32(h + 20, 0);
    efi_put32(h + 24, (uint32_t)sig_size);
    return rs_bytes_append(out, h, sizeof(h), err);
}

int esl_append_x509(rs_bytes *out, const efi_guid *owner, const uint8_t *der, size_t len, rs_error *err)
{
    size_t sig_size = OWNER_SIZE + len;

    if (append_header(out, &efi_guid_cert_x509, ESL_HEADER + (uint64_t)sig_size, sig_size, err) < 0 ||
        rs_bytes_append(out, owner->b, OWNER_SIZE, err) < 0)
        return -1;
    return rs_bytes_append(out, der, len, err);
}

static const efi_guid *hash_type(const EVP_MD *md)
{
    switch (EVP_MD_get_type(md)) {
    case NID_sha1: return &efi_guid_cert_sha1;
    case NID_sha256: return &efi_guid_cert_sha256;
    case NID_sha384: return &efi_guid_cert_sha384;
    case NID_sha512: return &efi_guid_cert_sha512;
    default: return NULL;
    }
}

int esl_append_hashes(rs_bytes *out, const efi_guid *owner, const rs_digest *hashes, size_t n, rs_error *err)
{
    const efi_guid *type = n ? hash_type(hashes[0].md) : NULL;
    size_t sig_size;

    if (!type)
        return rs_fail(err, "no hashes, or a hash algorithm signature lists cannot hold");
    sig_size = OWNER_SIZE + hashes[0].len;
    if (append_header(out, type, ESL_HEADER + (uint64_t)sig_size * n, sig_size, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (hashes[i].md != hashes[0].md)
            return rs_fail(err, "one signature list cannot mix hash algorithms");
        if (rs_bytes_append(out, owner->b, OWNER_SIZE, err) < 0 ||
            rs_bytes_append(out, hashes[i].bytes, hashes[i].len, err) < 0)
            return -1;
    }
    return 0;
}

#include "uefi/efi.h"

#include "base/bytes.h"

#include <stdio.h>
#include <string.h>

#define GUID(d1, d2, d3, ...)                                                                                 \
    {                                                                                                         \
        {                                                                                                     \
            (d1) & 0xff, ((d1) >> 8) & 0xff, ((d1) >> 16) & 0xff, ((d1) >> 24) & 0xff, (d2) & 0xff, (d2) >> 8, \
                (d3) & 0xff, (d3) >> 8, __VA_ARGS__                                                           \
        }                                                                                                     \
    }

const efi_guid efi_guid_global = GUID(0x8be4df61, 0x93ca, 0x11d2, 0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c);
const efi_guid efi_guid_image_security =
    GUID(0xd719b2cb, 0x3d3a, 0x4596, 0xa3, 0xbc, 0xda, 0xd0, 0x0e, 0x67, 0x65, 0x6f);
const efi_guid efi_guid_cert_x509 = GUID(0xa5c059a1, 0x94e4, 0x4aa7, 0x87, 0xb5, 0xab, 0x15, 0x5c, 0x2b, 0xf0, 0x72);
const efi_guid efi_guid_cert_sha256 =
    GUID(0xc1c41626, 0x504c, 0x4092, 0xac, 0xa9, 0x41, 0xf9, 0x36, 0x93, 0x43, 0x28);
const efi_guid efi_guid_cert_sha384 =
    GUID(0xff3e5307, 0x9fd0, 0x48c9, 0x85, 0xf1, 0x8a, 0xd5, 0x6c, 0x70, 0x1e, 0x01);
const efi_guid efi_guid_cert_sha512 =
    GUID(0x093e0fae, 0xa6c4, 0x4f50, 0x9f, 0x1b, 0xd4, 0x1e, 0x2b, 0x89, 0xc1, 0x9a);
const efi_guid efi_guid_cert_x509_sha256 =
    GUID(0x3bd2a492, 0x96c0, 0x4079, 0xb4, 0x20, 0xfc, 0xf9, 0x8e, 0xf1, 0x03, 0xed);
const efi_guid efi_guid_cert_pkcs7 = GUID(0x4aafd29d, 0x68df, 0x49ee, 0x8a, 0xa9, 0x34, 0x7d, 0x37, 0x56, 0x65, 0xa7);
const efi_guid efi_guid_auth_var_store =
    GUID(0xaaf32c78, 0x947b, 0x439a, 0xa1, 0x80, 0x2e, 0x14, 0x4e, 0xc3, 0x77, 0x92);
const efi_guid efi_guid_nv_data_fv = GUID(0xfff12b8d, 0x7696, 0x4c8b, 0xa9, 0x85, 0x27, 0x47, 0x07, 0x5b, 0x4f, 0x50);

const efi_guid efi_guid_cert_sha1 = GUID(0x826ca512, 0xcf10, 0x4ac9, 0xb1, 0x87, 0xbe, 0x01, 0x49, 0x66, 0x31, 0xbd);
const efi_guid efi_guid_shim_lock = GUID(0x605dab50, 0xe046, 0x4300, 0xab, 0xb6, 0x3d, 0xd8, 0x10, 0xdd, 0x8b, 0x23);
static const efi_guid guid_microsoft =
    GUID(0x77fa9abd, 0x0359, 0x4d32, 0xbd, 0x60, 0x28, 0xf4, 0xe7, 0x8f, 0x78, 0x4b);

static const struct {
    const efi_guid *guid;
    const char *name;
} known[] = {
    { &efi_guid_global, "EFI_GLOBAL_VARIABLE" },
    { &efi_guid_image_security, "EFI_IMAGE_SECURITY_DATABASE" },
    { &efi_guid_cert_x509, "EFI_CERT_X509" },
    { &efi_guid_cert_sha1, "EFI_CERT_SHA1" },
    { &efi_guid_cert_sha256, "EFI_CERT_SHA256" },
    { &efi_guid_cert_sha384, "EFI_CERT_SHA384" },
    { &efi_guid_cert_sha512, "EFI_CERT_SHA512" },
    { &efi_guid_cert_x509_sha256, "EFI_CERT_X509_SHA256" },
    { &efi_guid_cert_pkcs7, "EFI_CERT_TYPE_PKCS7" },
    { &efi_guid_shim_lock, "SHIM_LOCK" },
    { &guid_microsoft, "Microsoft" },
};

const char *efi_guid_name(const efi_guid *g)
{
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (efi_guid_equal(g, known[i].guid))
            return known[i].name;
    return NULL;
}

bool efi_guid_equal(const efi_guid *a, const efi_guid *b)
{
    return memcmp(a->b, b->b, sizeof(a->b)) == 0;
}

/* Position in the string of each byte of the on-disk form. */
static const uint8_t byte_pos[16] = { 6, 4, 2, 0, 11, 9, 16, 14, 19, 21, 24, 26, 28, 30, 32, 34 };

int efi_guid_parse(const char *s, efi_guid *out, rs_error *err)
{
    if (strlen(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-')
        return rs_fail(err, "'%s' is not a GUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)", s);
    for (int i = 0; i < 16; i++) {
        int hi = rs_hex_nibble(s[byte_pos[i]]), lo = rs_hex_nibble(s[byte_pos[i] + 1]);

        if (hi < 0 || lo < 0)
            return rs_fail(err, "'%s' is not a GUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)", s);
        out->b[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

void efi_guid_format(const efi_guid *g, char out[EFI_GUID_STR])
{
    static const char hex[] = "0123456789abcdef";

    memset(out, '-', EFI_GUID_STR - 1);
    out[EFI_GUID_STR - 1] = '\0';
    for (int i = 0; i < 16; i++) {
        out[byte_pos[i]] = hex[g->b[i] >> 4];
        out[byte_pos[i] + 1] = hex[g->b[i] & 15];
    }
}

void efi_time_from_unix(time_t t, uint8_t out[EFI_TIME_SIZE])
{
    struct tm tm;

    memset(out, 0, EFI_TIME_SIZE);
    gmtime_r(&t, &tm);
    efi_put16(out, (uint16_t)(tm.tm_year + 1900));
    out[2] = (uint8_t)(tm.tm_mon + 1);
    out[3] = (uint8_t)tm.tm_mday;
    out[4] = (uint8_t)tm.tm_hour;
    out[5] = (uint8_t)tm.tm_min;
    out[6] = (uint8_t)tm.tm_sec;
}

bool efi_time_to_unix(const uint8_t t[EFI_TIME_SIZE], time_t *out)
{
    struct tm tm = { .tm_year = efi_le16(t) - 1900, .tm_mon = t[2] - 1, .tm_mday = t[3],
                     .tm_hour = t[4], .tm_min = t[5], .tm_sec = t[6] };

    if (efi_le16(t) < 1900 || efi_le16(t) > 9999 || t[2] < 1 || t[2] > 12 || t[3] < 1 || t[3] > 31 || t[4] > 23 ||
        t[5] > 59 || t[6] > 59)
        return false;
    *out = timegm(&tm);
    return *out >= 0;
}

void efi_time_format(const uint8_t t[EFI_TIME_SIZE], char out[32])
{
    snprintf(out, 32, "%04u-%02u-%02uT%02u:%02u:%02uZ", efi_le16(t), t[2] % 100u, t[3] % 100u, t[4] % 100u,
             t[5] % 100u, t[6] % 100u);
}

int efi_time_compare(const uint8_t a[EFI_TIME_SIZE], const uint8_t b[EFI_TIME_SIZE])
{
    if (efi_le16(a) != efi_le16(b))
        return efi_le16(a) < efi_le16(b) ? -1 : 1;
    for (int i = 2; i <= 6; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

int efi_secure_var(const char *name, const efi_guid **guid, rs_error *err)
{
    if (!strcmp(name, "PK") || !strcmp(name, "KEK"))
        *guid = &efi_guid_global;
    else if (!strcmp(name, "db") || !strcmp(name, "dbx"))
        *guid = &efi_guid_image_security;
    else
        return rs_fail(err, "'%s' is not a Secure Boot variable (PK, KEK, db or dbx)", name);
    return 0;
}

#include "uefi/trust_scan.h"

#include <openssl/asn1.h>
#include <openssl/err.h>
#include <stdlib.h>
#include <string.h>

#include "uefi/efi.h"
#include "uefi/esl.h"

/* struct cert_table in shim.c: four little-endian uint32s. */
#define CERT_TABLE 16

/* The list types firmware (db) or shim (vendor_db, MokList) read. */
static const efi_guid *const list_types[] = {
    &efi_guid_cert_x509,   &efi_guid_cert_sha1,   &efi_guid_cert_sha256,
    &efi_guid_cert_sha384, &efi_guid_cert_sha512, &efi_guid_cert_x509_sha256,
};

/* shim's mirror_mok_db makes these for the OS; MokManager and fallback,
 * which carry shim's SBAT row too, never name them. UTF-16LE. */
#define UTF16LE(s) { s, sizeof(s) - 1 }
static const struct {
    const char *bytes;
    size_t len;
} mirror_names[] = {
    UTF16LE("M\0o\0k\0L\0i\0s\0t\0R\0T\0"),
    UTF16LE("M\0o\0k\0L\0i\0s\0t\0X\0R\0T\0"),
    UTF16LE("M\0o\0k\0S\0B\0S\0t\0a\0t\0e\0R\0T\0"),
};

void trust_scan_init(trust_scan *s)
{
    *s = (trust_scan){ 0 };
}

void trust_scan_free(trust_scan *s)
{
    for (size_t i = 0; i < s->n_items; i++)
        X509_free(s->items[i].cert);
    free(s->items);
    free(s->tables);
    trust_scan_init(s);
}

static int add_item(trust_scan *s, trust_item it, rs_error *err)
{
    if (s->n_items == TRUST_SCAN_MAX_ITEMS)
        return rs_fail(err, "more than %d certificates and signature lists", TRUST_SCAN_MAX_ITEMS);
    if (s->n_items == s->cap_items) {
        size_t cap = s->cap_items ? 2 * s->cap_items : 16;
        trust_item *n = realloc(s->items, cap * sizeof(*n));

        if (!n)
            return rs_fail(err, "out of memory");
        s->items = n;
        s->cap_items = cap;
    }
    s->items[s->n_items++] = it;
    return 0;
}

/* Two section headers may name the same bytes: one table, counted once. */
static int add_table(trust_scan *s, trust_table t, rs_error *err)
{
    for (size_t i = 0; i < s->n_tables; i++)
        if (s->tables[i].off == t.off)
            return 0;
    if (s->n_tables == s->cap_tables) {
        size_t cap = s->cap_tables ? 2 * s->cap_tables : 4;
        trust_table *n;

        if (s->n_tables >= TRUST_SCAN_MAX_ITEMS)
            return rs_fail(err, "more than %d certificate tables", TRUST_SCAN_MAX_ITEMS);
        if (!(n = realloc(s->tables, cap * sizeof(*n))))
            return rs_fail(err, "out of memory");
        s->tables = n;
        s->cap_tables = cap;
    }
    s->tables[s->n_tables++] = t;
    return 0;
}

/* One DER header, as OpenSSL reads it: a universal constructed SEQUENCE
 * whose contents fit in max bytes. *content_max is how far they may go. */
static bool sequence_header(const unsigned char **p, long max, long *content_max)
{
    const unsigned char *start = *p;
    int tag, cls, r;
    long n;

    r = ASN1_get_object(p, &n, &tag, &cls, max);
    if ((r & 0x80) || !(r & V_ASN1_CONSTRUCTED) || tag != V_ASN1_SEQUENCE || cls != V_ASN1_UNIVERSAL)
        return false;
    *content_max = (r & 1) ? max - (long)(*p - start) : n;   /* indefinite: to the end */
    return true;
}

/* Every Certificate is a SEQUENCE whose first element is a SEQUENCE
 * (tbsCertificate): a cheap necessary condition for d2i_X509. */
static bool certificate_lead(const uint8_t *p, size_t left)
{
    const unsigned char *q = p;
    long max = left > LONG_MAX ? LONG_MAX : (long)left, inner;

    return sequence_header(&q, max, &inner) && sequence_header(&q, inner, &inner);
}

static int find_certs(trust_scan *s, const uint8_t *buf, size_t len, uint64_t base, rs_error *err)
{
    for (const uint8_t *p = memchr(buf, 0x30, len); p; p = memchr(p + 1, 0x30, len - (size_t)(p + 1 - buf))) {
        size_t left = len - (size_t)(p - buf);
        const unsigned char *q = p;
        X509 *c;

        if (!certificate_lead(p, left)) {
            ERR_clear_error();
            continue;
        }
        if (!(c = d2i_X509(NULL, &q, left > LONG_MAX ? LONG_MAX : (long)left))) {
            ERR_clear_error();
            continue;
        }
        if (add_item(s, (trust_item){ .off = base + (uint64_t)(p - buf), .len = (uint64_t)(q - p), .cert = c }, err) < 0) {
            X509_free(c);
            return -1;
        }
    }
    return 0;
}

/* A list of `type` at p: the size it claims fits, and esl_walk takes it whole. */
static int find_lists_of(trust_scan *s, const efi_guid *type, const uint8_t *buf, size_t len, uint64_t base,
                         rs_error *err)
{
    rs_error ignored;

    for (size_t pos = 0; len - pos >= ESL_HEADER;) {
        const uint8_t *p = memmem(buf + pos, len - pos, type->b, sizeof(type->b));
        uint32_t size;

        if (!p || (size_t)(buf + len - p) < ESL_HEADER)
            break;
        pos = (size_t)(p - buf) + 1;
        size = efi_le32(p + 16);
        if (size < ESL_HEADER || size > (size_t)(buf + len - p) || esl_walk(p, size, NULL, NULL, &ignored) < 0)
            continue;
        if (add_item(s, (trust_item){ .off = base + (uint64_t)(p - buf), .len = size,
                                      .hashes = type != &efi_guid_cert_x509 }, err) < 0)
            return -1;
    }
    return 0;
}

static int by_offset(const void *a, const void *b)
{
    const trust_item *x = a, *y = b;

    return x->off < y->off ? -1 : x->off > y->off;
}

static bool item_starts_at(const trust_item *items, size_t n, uint64_t off)
{
    trust_item key = { .off = off };

    return bsearch(&key, items, n, sizeof(*items), by_offset) != NULL;
}

/* A blob of a table at t: size bytes at t + rel, inside the bytes, where
 * something found here starts. */
static bool blob_ok(const trust_item *items, size_t n, size_t len, uint64_t base, size_t t, uint32_t rel,
                    uint32_t size)
{
    uint64_t at = (uint64_t)t + rel;

    return at <= len && size <= len - at && item_starts_at(items, n, base + at);
}

static int find_tables(trust_scan *s, size_t first, const uint8_t *buf, size_t len, uint64_t base, rs_error *err)
{
    const trust_item *items = s->items + first;
    size_t n = s->n_items - first;

    for (size_t t = 0; len >= CERT_TABLE && t <= len - CERT_TABLE; t += 4) {
        const uint8_t *h = buf + t;
        uint32_t auth = efi_le32(h), deauth = efi_le32(h + 4), auth_rel = efi_le32(h + 8), deauth_rel = efi_le32(h + 12);

        if ((!auth && !deauth) || (auth && !blob_ok(items, n, len, base, t, auth_rel, auth)) ||
            (deauth && !blob_ok(items, n, len, base, t, deauth_rel, deauth)))
            continue;
        if (add_table(s, (trust_table){ .off = base + t, .auth_off = base + t + auth_rel, .auth_len = auth,
                                        .deauth_off = base + t + deauth_rel, .deauth_len = deauth }, err) < 0)
            return -1;
    }
    return 0;
}

int trust_scan_bytes(trust_scan *s, const uint8_t *buf, size_t len, uint64_t base, rs_error *err)
{
    size_t first = s->n_items;

    if (!len)
        return 0;
    if (find_certs(s, buf, len, base, err) < 0)
        return -1;
    for (size_t i = 0; i < sizeof(list_types) / sizeof(list_types[0]); i++)
        if (find_lists_of(s, list_types[i], buf, len, base, err) < 0)
            return -1;
    if (s->n_items > first)   /* never qsort(NULL, 0): items is NULL until the first */
        qsort(s->items + first, s->n_items - first, sizeof(*s->items), by_offset);
    for (size_t i = 0; i < sizeof(mirror_names) / sizeof(mirror_names[0]); i++)
        s->mok_mirrors |= memmem(buf, len, mirror_names[i].bytes, mirror_names[i].len) != NULL;
    return s->n_items > first ? find_tables(s, first, buf, len, base, err) : 0;
}

bool trust_scan_in_deauthorized(const trust_scan *s, uint64_t off, uint64_t len)
{
    for (size_t i = 0; i < s->n_tables; i++) {
        const trust_table *t = &s->tables[i];

        if (t->deauth_len && off >= t->deauth_off && len <= t->deauth_len &&
            off - t->deauth_off <= t->deauth_len - len)
            return true;
    }
    return false;
}

/* The embedded-trust scanner (uefi/trust_scan.h): certificates in every
 * length form OpenSSL reads, at any offset and inside one another;
 * signature lists; shim's cert_table found by where its blobs start; the
 * MOK mirror names. The images around them are in
 * interop/test_embedded_trust.sh, Debian's shim in test_custody.sh. */
#include <openssl/evp.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "uefi/efi.h"
#include "uefi/trust_scan.h"

static EVP_PKEY *key;

/* A self-signed Ed25519 certificate: under 256 bytes, so "30 81 LL", not
 * shim's "30 82 LL LL". ext, when given, is carried in a private extension. */
static size_t make_cert(uint8_t *out, size_t cap, const char *cn, const uint8_t *ext, size_t ext_len)
{
    X509 *c = X509_new();
    unsigned char *p = out;
    int len;

    X509_set_version(c, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(c), 1);
    X509_gmtime_adj(X509_getm_notBefore(c), 0);
    X509_gmtime_adj(X509_getm_notAfter(c), 3600);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(c), "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(c, X509_get_subject_name(c));
    X509_set_pubkey(c, key);
    if (ext) {
        ASN1_OBJECT *oid = OBJ_txt2obj("1.3.6.1.4.1.99999.1", 1);
        ASN1_OCTET_STRING *v = ASN1_OCTET_STRING_new();
        X509_EXTENSION *e;

        ASN1_OCTET_STRING_set(v, ext, (int)ext_len);
        e = X509_EXTENSION_create_by_OBJ(NULL, oid, 0, v);
        X509_add_ext(c, e, -1);
        X509_EXTENSION_free(e);
        ASN1_OCTET_STRING_free(v);
        ASN1_OBJECT_free(oid);
    }
    X509_sign(c, key, NULL);
    len = i2d_X509(c, NULL);
    CHECK(len > 0 && (size_t)len <= cap);
    i2d_X509(c, &p);
    X509_free(c);
    return (size_t)len;
}

static size_t certs_in(const trust_scan *s)
{
    size_t n = 0;

    for (size_t i = 0; i < s->n_items; i++)
        n += s->items[i].cert != NULL;
    return n;
}

static void scan(trust_scan *s, const uint8_t *buf, size_t len)
{
    rs_error err;

    trust_scan_init(s);
    CHECK(trust_scan_bytes(s, buf, len, 0x1000, &err) == 0);
}

/* In noise, at an odd offset, short form: found, with its offset and length. */
static void test_short_form(void)
{
    uint8_t buf[1024], der[512];
    size_t n = make_cert(der, sizeof(der), "short", NULL, 0);
    trust_scan s;

    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)(i * 37 + 0x30 * (i % 3 == 0));
    CHECK(der[0] == 0x30 && der[1] == 0x81);
    memcpy(buf + 333, der, n);
    scan(&s, buf, sizeof(buf));
    CHECK(certs_in(&s) == 1 && s.n_items == 1);
    CHECK(s.n_items && s.items[0].off == 0x1000 + 333 && s.items[0].len == n);
    trust_scan_free(&s);
}

/* BER's indefinite length, which d2i_X509 reads too: 30 80 ... 00 00. */
static void test_indefinite_length(void)
{
    uint8_t der[512], ber[520];
    size_t n = make_cert(der, sizeof(der), "indefinite", NULL, 0);
    const unsigned char *p = ber;
    trust_scan s;
    X509 *c;

    ber[0] = 0x30;
    ber[1] = 0x80;
    memcpy(ber + 2, der + 3, n - 3);
    ber[n - 1] = ber[n] = 0;
    c = d2i_X509(NULL, &p, (long)(n + 1));
    scan(&s, ber, n + 1);
    CHECK(c != NULL && certs_in(&s) == 1);
    X509_free(c);
    trust_scan_free(&s);
}

/* A certificate carried inside another's bytes is found as well. */
static void test_nested(void)
{
    uint8_t inner[512], outer[1024];
    size_t n = make_cert(inner, sizeof(inner), "inner", NULL, 0), m;
    trust_scan s;

    m = make_cert(outer, sizeof(outer), "outer", inner, n);
    scan(&s, outer, m);
    CHECK(certs_in(&s) == 2);
    trust_scan_free(&s);
}

static size_t put_hash_list(uint8_t *p)
{
    memcpy(p, efi_guid_cert_sha256.b, 16);
    efi_put32(p + 16, 28 + 48);
    efi_put32(p + 20, 0);
    efi_put32(p + 24, 48);
    memset(p + 28, 0xab, 48);
    return 28 + 48;
}

/* A table is four words whose blobs start at what was found; a word off
 * by one is not a table. Its revocations are revocations, and only those. */
static void test_tables(void)
{
    uint8_t buf[2048] = { 0 }, der[512];
    size_t n = make_cert(der, sizeof(der), "vendor", NULL, 0), h;
    trust_scan s;

    memcpy(buf + 16, der, n);
    h = put_hash_list(buf + 16 + n);
    efi_put32(buf, (uint32_t)n);
    efi_put32(buf + 4, (uint32_t)h);
    efi_put32(buf + 8, 16);
    efi_put32(buf + 12, (uint32_t)(16 + n));
    put_hash_list(buf + 1024);
    scan(&s, buf, sizeof(buf));
    CHECK(s.n_tables == 1 && s.n_items == 3);
    CHECK(s.n_tables && s.tables[0].off == 0x1000 && s.tables[0].auth_off == 0x1000 + 16);
    CHECK(trust_scan_in_deauthorized(&s, 0x1000 + 16 + n, h));
    CHECK(!trust_scan_in_deauthorized(&s, 0x1000 + 1024, h));
    CHECK(!trust_scan_in_deauthorized(&s, 0x1000 + 16, n));
    trust_scan_free(&s);

    efi_put32(buf + 8, 17);
    scan(&s, buf, sizeof(buf));
    CHECK(s.n_tables == 0);
    trust_scan_free(&s);
}

static void test_mirrors(void)
{
    static const uint8_t wide[] = "M\0o\0k\0S\0B\0S\0t\0a\0t\0e\0R\0T\0";
    static const char narrow[] = "MokListRT MokListXRT MokSBStateRT";
    trust_scan s;

    scan(&s, wide, sizeof(wide));
    CHECK(s.mok_mirrors);
    trust_scan_free(&s);
    scan(&s, (const uint8_t *)narrow, sizeof(narrow));
    CHECK(!s.mok_mirrors);
    trust_scan_free(&s);
}

/* More than it keeps is an error, not a silent cut. */
static void test_bound(void)
{
    size_t len = (TRUST_SCAN_MAX_ITEMS + 1) * 76;
    uint8_t *buf = malloc(len);
    trust_scan s;
    rs_error err;

    for (size_t i = 0; i < TRUST_SCAN_MAX_ITEMS + 1; i++)
        put_hash_list(buf + i * 76);
    trust_scan_init(&s);
    CHECK(trust_scan_bytes(&s, buf, len, 0, &err) == -1 && strstr(err.msg, "more than"));
    trust_scan_free(&s);
    free(buf);
}

int main(void)
{
    key = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
    CHECK(key != NULL);
    test_short_form();
    test_indefinite_length();
    test_nested();
    test_tables();
    test_mirrors();
    test_bound();
    EVP_PKEY_free(key);
    return harness_finish("test_trust_scan");
}

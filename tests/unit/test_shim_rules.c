/* shim 16.1's rules that a boot cannot show one by one: how it parses
 * SBAT, which level applies, and which entries of a signature list it
 * reads. */
#include <openssl/evp.h>
#include <openssl/x509v3.h>
#include <string.h>

#include "harness.h"
#include "uefi/esl.h"
#include "uefi/sbat.h"
#include "uefi/sbat_level.h"
#include "uefi/shim_db.h"

#define ROW_GRUB3 "grub,3,Free Software Foundation,grub,2.06,https://www.gnu.org/software/grub/\n"
#define ROW_SBAT "sbat,1,SBAT Version,sbat,1,https://github.com/rhboot/shim/blob/main/SBAT.md\n"

static int verdict(const char *image, const char *level)
{
    char why[256];
    rs_error err;

    return sbat_check(image, level, why, sizeof(why), &err);
}

static void test_sbat_parsing(void)
{
    /* Rows need 6 non-empty columns (sbat.c parse_sbat_section). */
    CHECK(verdict(ROW_SBAT "grub,3\n", "sbat,1,2021030218\n") == 1);
    CHECK(verdict(ROW_SBAT "grub,3,,grub,2.06,x\n", "sbat,1,2021030218\n") == 1);
    CHECK(verdict(ROW_SBAT ROW_GRUB3, "sbat,1,2021030218\n") == 0);
    /* Extra columns are ignored. */
    CHECK(verdict(ROW_SBAT "grub,3,a,b,c,d,e,f\n", "sbat,1,2021030218\ngrub,3\n") == 0);
    /* Lines end at CR or LF, and a BOM is skipped (csv.c). */
    CHECK(verdict("\xef\xbb\xbf" ROW_SBAT "\r\n" ROW_GRUB3, "sbat,1,2021030218\rgrub,4\r") == 1);
    CHECK(verdict("\xef\xbb\xbf" ROW_SBAT "\r\n" ROW_GRUB3, "sbat,1,2021030218\rgrub,3\r") == 0);
    /* The first level row naming a component decides (verify_sbat_helper). */
    CHECK(verdict(ROW_SBAT ROW_GRUB3, "sbat,1,2021030218\ngrub,2\ngrub,5\n") == 0);
    CHECK(verdict(ROW_SBAT ROW_GRUB3, "sbat,1,2021030218\ngrub,5\ngrub,2\n") == 1);
    /* atoi: non-digits read as 0. */
    CHECK(verdict(ROW_SBAT "grub,x3,a,b,c,d\n", "sbat,1,2021030218\ngrub,1\n") == 1);
    /* The data ends at its first NUL. */
    CHECK(verdict(ROW_SBAT "grub,1,a,b,c,d\n", "sbat,1,2021030218\n\0grub,5\n") == 0);
    /* A level row needs component and generation. */
    CHECK(verdict(ROW_SBAT ROW_GRUB3, "sbat,1,2021030218\ngrub,\n") < 0);
    CHECK(sbat_level_check("sbat,1,2024010900\nshim,4\ngrub,5\n", &(rs_error){ 0 }) == 0);
}

static const char *effective(const sbat_image *shim, const char *var, bool attrs_ok, int policy)
{
    static char out[256];
    sbat_level_input in = { var, attrs_ok, policy };
    sbat_level l;
    rs_error err;

    if (sbat_level_effective(shim, &in, &l, &err) < 0)
        return "error";
    snprintf(out, sizeof(out), "%s", l.csv);
    sbat_level_free(&l);
    return out;
}

static void test_sbat_level(void)
{
    sbat_image old = { 0 };
    sbat_image s161 = { .previous = "sbat,1,2025021800\nshim,4\ngrub,5\n", .latest = "sbat,1,2025021800\nshim,4\ngrub,5\n" };
    sbat_image s158 = { .previous = "sbat,1,2023012900\nshim,2\ngrub,3\n", .latest = "sbat,1,2024010900\nshim,4\ngrub,4\n" };
    const char *newer = "sbat,1,2026010100\nshim,4\ngrub,6\n";

    /* A shim without .sbatlevel still applies its built-in level. */
    CHECK(!strcmp(effective(&old, NULL, true, 0), SBAT_LEVEL_ORIGINAL));
    CHECK(!strcmp(effective(&s158, NULL, true, 0), s158.previous));
    CHECK(!strcmp(effective(&s158, NULL, true, SBAT_POLICY_LATEST), s158.latest));
    /* Reset is refused in secure mode: automatic. */
    CHECK(!strcmp(effective(&s158, NULL, true, SBAT_POLICY_RESET), s158.previous));
    /* A newer SbatLevel variable wins; an older one is replaced. */
    CHECK(!strcmp(effective(&s161, newer, true, 0), newer));
    CHECK(!strcmp(effective(&s161, s158.previous, true, 0), s161.previous));
    /* A variable with the wrong attributes is not preserved. */
    CHECK(!strcmp(effective(&s161, newer, false, 0), s161.previous));
    /* A greater version field wins whatever the date. */
    CHECK(!strcmp(effective(&s161, "sbat,2,2020010100\ngrub,9\n", true, 0), "sbat,2,2020010100\ngrub,9\n"));
}

/* A self-signed certificate, with the module-signing EKU when asked. */
static X509 *make_cert(bool modsign)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    X509_EXTENSION *ext = NULL;

    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), modsign ? 2 : 1);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC, (const unsigned char *)"t", -1, -1, 0);
    X509_set_issuer_name(x, X509_get_subject_name(x));
    X509_gmtime_adj(X509_getm_notBefore(x), 0);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600);
    X509_set_pubkey(x, key);
    if (modsign) {
        ext = X509V3_EXT_conf_nid(NULL, NULL, NID_ext_key_usage, "codeSigning,1.3.6.1.4.1.2312.16.1.2");
        X509_add_ext(x, ext, -1);
        X509_EXTENSION_free(ext);
    }
    X509_sign(x, key, EVP_sha256());
    EVP_PKEY_free(key);
    return x;
}

static void append_cert(rs_bytes *esl, X509 *x)
{
    unsigned char *der = NULL;
    int len = i2d_X509(x, &der);
    efi_guid owner = { { 0 } };
    rs_error err;

    CHECK(len > 0 && esl_append_x509(esl, &owner, der, (size_t)len, &err) == 0);
    OPENSSL_free(der);
}

static size_t anchors_read(const rs_bytes *esl)
{
    shim_db db;
    rs_error err;
    size_t n;

    CHECK(shim_db_init(&db, &err) == 0);
    CHECK(shim_list_add_esl(&db.db, esl->data, esl->len, &err) == 0);
    n = (size_t)sk_X509_num(db.db.certs.anchors);
    shim_db_free(&db);
    return n;
}

static void test_list_certs(void)
{
    X509 *plain = make_cert(false), *modsign = make_cert(true);
    rs_bytes one = { 0 }, eku = { 0 };

    CHECK(!shim_cert_is_modsign(plain) && shim_cert_is_modsign(modsign));
    append_cert(&one, plain);
    append_cert(&eku, modsign);
    CHECK(anchors_read(&one) == 1);
    /* verify_eku: module-signing certificates are skipped. */
    CHECK(anchors_read(&eku) == 0);
    rs_bytes_free(&one);
    rs_bytes_free(&eku);
    X509_free(plain);
    X509_free(modsign);
}

static void test_list_hashes(void)
{
    rs_digest sha1 = { .md = EVP_sha1(), .len = 20 }, sha256 = { .md = EVP_sha256(), .len = 32 };
    efi_guid owner = { { 0 } };
    rs_bytes esl = { 0 };
    shim_db db;
    rs_error err;

    sha1.bytes[0] = 1;
    sha256.bytes[0] = 2;
    CHECK(esl_append_hashes(&esl, &owner, &sha1, 1, &err) == 0);
    CHECK(esl_append_hashes(&esl, &owner, &sha256, 1, &err) == 0);
    CHECK(shim_db_init(&db, &err) == 0);
    CHECK(shim_list_add_esl(&db.dbx, esl.data, esl.len, &err) == 0);
    CHECK(shim_list_add_esl(&db.mokx, esl.data, esl.len, &err) == 0);
    CHECK(shim_list_add_esl(&db.vendor_db, esl.data, esl.len, &err) == 0);
    /* SHA-1 from dbx (and db, vendor dbx), SHA-256 only from MOK lists
     * and vendor_db. */
    CHECK(rs_trust_hash_listed(&db.dbx.hashes, &sha1) && rs_trust_hash_listed(&db.dbx.hashes, &sha256));
    CHECK(!rs_trust_hash_listed(&db.mokx.hashes, &sha1) && rs_trust_hash_listed(&db.mokx.hashes, &sha256));
    CHECK(!rs_trust_hash_listed(&db.vendor_db.hashes, &sha1));
    shim_db_free(&db);
    rs_bytes_free(&esl);
}

/* check_db_cert_in_ram tries only the first entry of an X509 list: a
 * list of two certificates of the same DER size yields one anchor. */
static void test_list_first_cert_only(void)
{
    X509 *a = NULL, *b = NULL;
    unsigned char *da = NULL, *db_der = NULL;
    int la = -1, lb = -2;
    rs_bytes esl = { 0 };
    uint8_t h[ESL_HEADER] = { 0 }, owner[16] = { 0 };
    shim_db db;
    rs_error err;

    /* ECDSA signatures vary by a byte or two: a pair of the same size.
     * Both are made afresh each time, since a first one of a rare size
     * (a short r or s) would seldom be matched. */
    for (int i = 0; i < 64 && lb != la; i++) {
        X509_free(a);
        X509_free(b);
        OPENSSL_free(da);
        OPENSSL_free(db_der);
        da = db_der = NULL;
        a = make_cert(false);
        b = make_cert(false);
        la = i2d_X509(a, &da);
        lb = i2d_X509(b, &db_der);
    }
    CHECK(lb == la);
    memcpy(h, efi_guid_cert_x509.b, 16);
    efi_put32(h + 16, (uint32_t)(ESL_HEADER + 2 * (16 + la)));
    efi_put32(h + 24, (uint32_t)(16 + la));
    CHECK(rs_bytes_append(&esl, h, sizeof(h), &err) == 0);
    CHECK(rs_bytes_append(&esl, owner, 16, &err) == 0 && rs_bytes_append(&esl, da, (size_t)la, &err) == 0);
    CHECK(rs_bytes_append(&esl, owner, 16, &err) == 0 && rs_bytes_append(&esl, db_der, (size_t)la, &err) == 0);
    CHECK(shim_db_init(&db, &err) == 0);
    CHECK(shim_list_add_esl(&db.db, esl.data, esl.len, &err) == 0);
    CHECK(sk_X509_num(db.db.certs.anchors) == 1 && !X509_cmp(sk_X509_value(db.db.certs.anchors, 0), a));
    shim_db_free(&db);
    rs_bytes_free(&esl);
    OPENSSL_free(da);
    OPENSSL_free(db_der);
    X509_free(a);
    X509_free(b);
}

/* dbx EFI_CERT_X509_SHA256 entries are never read by shim. */
static void test_list_tbs_ignored(void)
{
    uint8_t esl[ESL_HEADER + 16 + 48] = { 0 };
    shim_db db;
    rs_error err;

    memcpy(esl, efi_guid_cert_x509_sha256.b, 16);
    efi_put32(esl + 16, sizeof(esl));
    efi_put32(esl + 24, 16 + 48);
    CHECK(shim_db_init(&db, &err) == 0);
    CHECK(shim_list_add_esl(&db.dbx, esl, sizeof(esl), &err) == 0);
    CHECK(db.dbx.hashes.n == 0 && sk_X509_num(db.dbx.certs.anchors) == 0);
    shim_db_free(&db);
}

int main(void)
{
    test_sbat_parsing();
    test_sbat_level();
    test_list_certs();
    test_list_hashes();
    test_list_tbs_ignored();
    test_list_first_cert_only();
    return harness_finish("test_shim_rules");
}

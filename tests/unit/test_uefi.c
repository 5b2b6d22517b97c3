/* GUIDs, signature lists, SBAT levels and variable stores from memory. */
#include <string.h>

#include "harness.h"
#include "uefi/efi.h"
#include "uefi/esl.h"
#include "uefi/sbat.h"
#include "uefi/varstore.h"
#include "uefi/varupdate.h"

static void test_guid(void)
{
    efi_guid g;
    char s[EFI_GUID_STR];
    rs_error err;

    CHECK(efi_guid_parse("d719b2cb-3d3a-4596-a3bc-dad00e67656f", &g, &err) == 0);
    CHECK(efi_guid_equal(&g, &efi_guid_image_security));
    CHECK(g.b[0] == 0xcb && g.b[3] == 0xd7 && g.b[4] == 0x3a && g.b[8] == 0xa3);
    efi_guid_format(&g, s);
    CHECK(strcmp(s, "d719b2cb-3d3a-4596-a3bc-dad00e67656f") == 0);
    CHECK(efi_guid_parse("d719b2cb-3d3a-4596-a3bc-dad00e67656", &g, &err) < 0);
    CHECK(efi_guid_parse("d719b2cb+3d3a-4596-a3bc-dad00e67656f", &g, &err) < 0);
    CHECK(efi_guid_parse("x719b2cb-3d3a-4596-a3bc-dad00e67656f", &g, &err) < 0);
}

static int count(void *ctx, const esl_entry *e, rs_error *err)
{
    (*(int *)ctx)++;
    return 0;
}

static void test_esl(void)
{
    rs_digest h[2] = { { .md = EVP_sha256(), .len = 32 }, { .md = EVP_sha256(), .len = 32 } };
    rs_bytes esl = { 0 }, merged = { 0 };
    efi_guid owner = { { 1 } };
    rs_error err;
    int n = 0;

    h[1].bytes[0] = 1;
    CHECK(esl_append_hashes(&esl, &owner, h, 2, &err) == 0);
    CHECK(esl.len == ESL_HEADER + 2 * 48);
    CHECK(esl_walk(esl.data, esl.len, count, &n, &err) == 0 && n == 2);
    /* Appending what is there already adds nothing. */
    CHECK(esl_merge(esl.data, esl.len, esl.data, esl.len, &merged, &err) == 0 && merged.len == esl.len);
    CHECK(esl_walk(esl.data, esl.len - 1, count, &n, &err) < 0);
    esl.data[24] = 16;   /* entry size too small */
    CHECK(esl_walk(esl.data, esl.len, count, &n, &err) < 0);
    rs_bytes_free(&esl);
    rs_bytes_free(&merged);
}

static void test_sbat(void)
{
    const char *img = "sbat,1,SBAT Version,sbat,1,x\ngrub,3,Free Software Foundation,grub,2.06,x\n";
    char why[256];
    rs_error err;

    CHECK(sbat_check(img, "sbat,1,2023012900\nshim,2\ngrub,3\n", why, sizeof(why), &err) == 0);
    CHECK(sbat_check(img, "sbat,1,2023012900\nshim,2\ngrub,4\n", why, sizeof(why), &err) == 1);
    CHECK(strstr(why, "grub generation 3") != NULL);
    CHECK(sbat_check(img, "sbat,1,2023012900\ngrub\n", why, sizeof(why), &err) < 0);
    CHECK(sbat_check(img, "", why, sizeof(why), &err) == 0);
    /* shim compares generations as UINT16: 65539 is 3, and 65540 is 4. */
    CHECK(sbat_check(img, "sbat,1,2023012900\ngrub,65539\n", why, sizeof(why), &err) == 0);
    CHECK(sbat_check(img, "sbat,1,2023012900\ngrub,65540\n", why, sizeof(why), &err) == 1);
    CHECK(sbat_check("sbat,1,x\ngrub,65539,x\n", "sbat,1,2023012900\ngrub,4\n", why, sizeof(why), &err) == 1);
    /* shim's atoi (AsciiStrDecimalToUintn): a sign or other text reads as
     * 0, leading spaces are skipped. */
    CHECK(sbat_check(img, "sbat,1,2023012900\ngrub,-1\n", why, sizeof(why), &err) == 0);
    CHECK(sbat_check(img, "sbat,1,2023012900\ngrub,+4\n", why, sizeof(why), &err) == 0);
    CHECK(sbat_check(img, "sbat,1,2023012900\ngrub, 4\n", why, sizeof(why), &err) == 1);
}

static void test_varstore(void)
{
    varstore vs;
    rs_error err;
    uint8_t buf[64];

    /* Never written (erased flash, or AAVMF_VARS.fd's zeros): said so. */
    memset(buf, 0xff, sizeof(buf));
    CHECK(varstore_parse(buf, sizeof(buf), &vs, &err) < 0 && strstr(err.msg, "blank variable store (every byte 0xff)"));
    varstore_free(&vs);
    memset(buf, 0, sizeof(buf));
    CHECK(varstore_parse(buf, sizeof(buf), &vs, &err) < 0 && strstr(err.msg, "blank variable store (every byte 0x00)"));
    varstore_free(&vs);
    /* One byte set: not blank, and no firmware volume. */
    buf[63] = 1;
    CHECK(varstore_parse(buf, sizeof(buf), &vs, &err) < 0 && strstr(err.msg, "no firmware volume signature"));
    varstore_free(&vs);
}

/* An empty store: a 72-byte firmware volume header, the store header, and
 * erased space up to len. */
static void blank_store(uint8_t *buf, size_t len)
{
    uint16_t sum = 0;

    memset(buf, 0, 100);
    memset(buf + 100, 0xff, len - 100);
    memcpy(buf + 16, efi_guid_nv_data_fv.b, 16);
    efi_put64(buf + 32, len);
    memcpy(buf + 40, "_FVH", 4);
    efi_put16(buf + 48, 72);
    memcpy(buf + 72, efi_guid_auth_var_store.b, 16);
    efi_put32(buf + 88, (uint32_t)(len - 72));
    buf[92] = 0x5a;
    buf[93] = 0xfe;
    for (size_t i = 0; i < 72; i += 2)
        sum = (uint16_t)(sum + efi_le16(buf + i));
    efi_put16(buf + 50, (uint16_t)-sum);
}

static bool reads_back(const varstore *vs, const char *name, const uint8_t *data, size_t len)
{
    const vs_var *v = varstore_find(vs, name, &efi_guid_global);

    return v && v->data_len == len && !memcmp(varstore_data(vs, v), data, len);
}

/* A damaged store with two live copies of KEK: a write must retire both,
 * or the older one keeps hiding the new value. */
static void test_varstore_two_live_copies(void)
{
    static const uint8_t ts[EFI_TIME_SIZE] = { 0xe8, 0x07, 1, 2 };
    const uint8_t a[] = { 'a' }, b[] = { 'b' }, c[] = { 'c' };
    uint8_t buf[1024];
    varstore vs, again;
    rs_error err;

    blank_store(buf, sizeof(buf));
    CHECK(varstore_parse(buf, sizeof(buf), &vs, &err) == 0);
    CHECK(varstore_set(&vs, "KEK", &efi_guid_global, EFI_SECURE_VAR_ATTRS, ts, a, 1, &err) == 0);
    CHECK(varstore_set(&vs, "KEK", &efi_guid_global, EFI_SECURE_VAR_ATTRS, ts, b, 1, &err) == 0);
    CHECK(reads_back(&vs, "KEK", b, 1));
    /* Revive the first copy: now it is live, and the first. */
    vs.image.data[vs.vars[0].off + 2] = VAR_ADDED;
    CHECK(varstore_parse(vs.image.data, vs.image.len, &again, &err) == 0);
    CHECK(reads_back(&again, "KEK", a, 1));
    CHECK(varstore_set(&again, "KEK", &efi_guid_global, EFI_SECURE_VAR_ATTRS, ts, c, 1, &err) == 0);
    CHECK(reads_back(&again, "KEK", c, 1));
    varstore_free(&again);
    varstore_free(&vs);
}

/* A torn write can leave bytes in the free space. A write that ends right
 * before a leftover variable header must be refused: the header would
 * join the chain and read as a variable. */
static void test_varstore_dirty_free_space(void)
{
    static const uint8_t ts[EFI_TIME_SIZE] = { 0xe8, 0x07, 1, 2 };
    const uint8_t a[] = { 'a' }, b[] = { 'b' };
    uint8_t buf[1024];
    varstore vs, dirty;
    uint64_t record;
    rs_error err;

    blank_store(buf, sizeof(buf));
    CHECK(varstore_parse(buf, sizeof(buf), &vs, &err) == 0);
    CHECK(varstore_set(&vs, "KEK", &efi_guid_global, EFI_SECURE_VAR_ATTRS, ts, a, 1, &err) == 0);
    /* A copy of that record where the next one of its size will end. */
    record = vs.free_off - vs.vars[0].off;
    memcpy(vs.image.data + vs.free_off + record, vs.image.data + vs.vars[0].off, record);
    CHECK(varstore_parse(vs.image.data, vs.image.len, &dirty, &err) == 0 && dirty.n == 1);
    CHECK(varstore_set(&dirty, "KEK", &efi_guid_global, EFI_SECURE_VAR_ATTRS, ts, b, 1, &err) < 0);
    CHECK(strstr(err.msg, "not erased") != NULL);
    varstore_free(&dirty);
    varstore_free(&vs);
}

int main(void)
{
    test_guid();
    test_esl();
    test_sbat();
    test_varstore();
    test_varstore_two_live_copies();
    test_varstore_dirty_free_space();
    return harness_finish("test_uefi");
}

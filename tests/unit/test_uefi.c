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
    CHECK(sbat_check(img, "sbat,1,2023012900\ngrub,-1\n", why, sizeof(why), &err) < 0);
    CHECK(sbat_check(img, "sbat,1,2023012900\ngrub,+4\n", why, sizeof(why), &err) < 0);
    CHECK(sbat_check(img, "sbat,1,2023012900\ngrub, 4\n", why, sizeof(why), &err) < 0);
}

static void test_varstore(void)
{
    varstore vs;
    rs_error err;
    uint8_t buf[64];

    memset(buf, 0xff, sizeof(buf));
    CHECK(varstore_parse(buf, sizeof(buf), &vs, &err) < 0);
    varstore_free(&vs);
}

int main(void)
{
    test_guid();
    test_esl();
    test_sbat();
    test_varstore();
    return harness_finish("test_uefi");
}

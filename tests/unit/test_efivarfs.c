/* efivarfs file names and contents: NAME-GUID, the attributes word, the
 * data; what is refused and why. */
#include <string.h>

#include "harness.h"
#include "uefi/efivarfs.h"

static const uint8_t secure_boot[] = { 0x06, 0, 0, 0, 1 };

static void test_parse(void)
{
    rs_error err;
    vs_var v;
    char guid[EFI_GUID_STR];

    CHECK(efivarfs_parse("SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", secure_boot, sizeof(secure_boot), &v,
                         &err) == 0);
    CHECK(!strcmp(v.name, "SecureBoot") && efi_guid_equal(&v.guid, &efi_guid_global));
    CHECK(v.attributes == 6 && v.data_off == 4 && v.data_len == 1 && v.active);
    /* A name may itself hold dashes: the GUID is the last 36 characters. */
    CHECK(efivarfs_parse("Boot-Next-x-605DAB50-E046-4300-ABB6-3DD810DD8B23", secure_boot, 4, &v, &err) == 0);
    efi_guid_format(&v.guid, guid);
    CHECK(!strcmp(v.name, "Boot-Next-x") && !strcmp(guid, "605dab50-e046-4300-abb6-3dd810dd8b23") &&
          v.data_len == 0);
}

static void test_refused(void)
{
    rs_error err;
    vs_var v;
    char long_name[300];

    CHECK(efivarfs_parse("-8be4df61-93ca-11d2-aa0d-00e098032b8c", secure_boot, 5, &v, &err) < 0);
    CHECK(efivarfs_parse("db_8be4df61-93ca-11d2-aa0d-00e098032b8c", secure_boot, 5, &v, &err) < 0);
    CHECK(strstr(err.msg, "NAME-GUID") != NULL);
    CHECK(efivarfs_parse("db-8be4df61-93ca-11d2-aa0d-00e098032b8z", secure_boot, 5, &v, &err) < 0);
    CHECK(efivarfs_parse("db-8be4df61-93ca-11d2-aa0d-00e098032b8c", secure_boot, 3, &v, &err) < 0);
    CHECK(strstr(err.msg, "attributes word") != NULL);
    memset(long_name, 'a', sizeof(long_name));
    strcpy(long_name + 260, "-8be4df61-93ca-11d2-aa0d-00e098032b8c");
    CHECK(efivarfs_parse(long_name, secure_boot, 5, &v, &err) < 0);
}

static void test_load_refuses_missing(void)
{
    rs_error err;
    varstore vs;

    CHECK(efivarfs_load("/nonexistent-efivars", &vs, &err) < 0);
    CHECK(strstr(err.msg, "/nonexistent-efivars") != NULL);
    varstore_free(&vs);
}

int main(void)
{
    test_parse();
    test_refused();
    test_load_refuses_missing();
    return harness_finish("test_efivarfs");
}

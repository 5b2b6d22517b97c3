/* One efivarfs file: its name (NAME-GUID) and its bytes (attributes word,
 * then data), as efi list --efivars and chain --efivars read them. The
 * input is the file name, a NUL, then the file's bytes. What parses must
 * hold together: the name and GUID give the file name back, the data is
 * the file past the attributes word, and a list variable's data walks as
 * signature lists or fails with a message. Failures must carry one too. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "fuzz_keys.h"
#include "uefi/efivarfs.h"
#include "uefi/esl.h"

static void check_parsed(const char *file_name, const uint8_t *buf, size_t len, const vs_var *v)
{
    char guid[EFI_GUID_STR], again[sizeof(v->name) + EFI_GUID_STR + 1];
    rs_error err = { 0 };

    efi_guid_format(&v->guid, guid);
    snprintf(again, sizeof(again), "%s-%s", v->name, guid);
    if (strcasecmp(again, file_name))
        fuzz_bug("a parsed name and GUID do not give the file name back", file_name);
    if (v->data_off != EFIVARFS_ATTR_SIZE || v->data_len != len - EFIVARFS_ATTR_SIZE || !v->active ||
        v->attributes != efi_le32(buf))
        fuzz_bug("a parsed variable does not cover the file past its attributes word", file_name);
    if ((!strcmp(v->name, "db") || !strncmp(v->name, "MokListRT", 9)) &&
        esl_walk(buf + v->data_off, v->data_len, NULL, NULL, &err) < 0 && !err.msg[0])
        fuzz_bug("esl_walk failed without a message", file_name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, '\0', size < 300 ? size : 300);
    char file_name[300];
    rs_error err = { 0 };
    vs_var v;
    size_t n;

    if (!nul)
        return 0;
    n = (size_t)(nul - data);
    memcpy(file_name, data, n);
    file_name[n] = '\0';
    if (efivarfs_parse(file_name, nul + 1, size - n - 1, &v, &err) < 0) {
        if (!err.msg[0])
            fuzz_bug("efivarfs_parse failed without a message", file_name);
        return 0;
    }
    check_parsed(file_name, nul + 1, size - n - 1, &v);
    return 0;
}

/* The OVMF variable store reader, and a write into whatever it accepted. */
#include <stddef.h>
#include <stdint.h>

#include "uefi/varstore.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t ts[EFI_TIME_SIZE] = { 0xe8, 0x07, 1, 2 };
    static const uint8_t payload[40] = { 1, 2, 3 };
    varstore vs;
    rs_error err;

    if (varstore_parse(data, size, &vs, &err) == 0) {
        const vs_var *v = varstore_find(&vs, "db", &efi_guid_image_security);

        if (v && v->data_len)
            (void)varstore_data(&vs, v)[v->data_len - 1];
        varstore_set(&vs, "db", &efi_guid_image_security, EFI_SECURE_VAR_ATTRS, ts, payload, sizeof(payload), &err);
    }
    varstore_free(&vs);
    return 0;
}

/* Signature lists and authenticated variable payloads: the walker, the
 * trust loader, the append merge, and the auth header parser. */
#include <stddef.h>
#include <stdint.h>

#include "crypto/trust.h"
#include "uefi/authvar.h"
#include "uefi/esl.h"
#include "uefi/uefi_trust.h"
#include "uefi/varupdate.h"

static int count(void *ctx, const esl_entry *e, rs_error *err)
{
    (*(size_t *)ctx) += e->len;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rs_error err;
    rs_trust t;
    rs_bytes merged = { 0 };
    authvar a;
    size_t total = 0;
    X509 *signer = NULL;

    esl_walk(data, size, count, &total, &err);
    if (rs_trust_init(&t, &err) == 0) {
        uefi_trust_add_esl(&t, data, size, size & 1, &err);
        rs_trust_free(&t);
    }
    esl_merge(data, size / 2, data + size / 2, size - size / 2, &merged, &err);
    rs_bytes_free(&merged);
    if (authvar_parse(data, size, &a, &err) == 0) {
        esl_walk(a.data, a.data_len, count, &total, &err);
        if (authvar_signer(&a, &signer, &err) == 0)
            X509_free(signer);
    }
    return 0;
}

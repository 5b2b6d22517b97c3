/* The offline-signing request parser: the request arrives from another
 * machine (or over the signing service's socket), so everything in it is
 * untrusted. Parsing must never crash, and anything it accepts must
 * describe exactly the container it rebuilds: written out and read back,
 * it parses to the same digest to sign. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/offline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rs_offline_request req, again;
    rs_error err;
    char *json = NULL;

    if (rs_offline_request_read((const char *)data, size, &req, &err) < 0)
        return 0;
    if (rs_offline_request_write(&req, &json, &err) < 0)
        abort();
    if (rs_offline_request_read(json, strlen(json), &again, &err) < 0)
        abort();
    if (!rs_digest_equal(&req.tbs, &again.tbs) || !rs_digest_equal(&req.image_digest, &again.image_digest))
        abort();
    free(json);
    rs_offline_request_free(&again);
    rs_offline_request_free(&req);
    return 0;
}

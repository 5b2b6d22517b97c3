/* The signing service's parsers of untrusted text: dak's requests.json, a
 * repository's Release and Packages files, and the service configuration.
 * The first byte picks the parser. */
#include <stddef.h>
#include <stdint.h>

#include "service/config.h"
#include "service/repo.h"
#include "service/requests.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data + 1;
    size_t len = size ? size - 1 : 0;
    rs_error err;

    if (size == 0)
        return 0;
    switch (data[0] % 4) {
    case 0: {
        rs_request_list l;

        if (rs_requests_parse(text, len, &l, &err) == 0)
            rs_request_list_free(&l);
        break;
    }
    case 1: {
        rs_release_file *files;
        size_t n;

        if (rs_release_parse(text, len, &files, &n, &err) == 0)
            rs_release_files_free(files, n);
        break;
    }
    case 2: {
        rs_repo_package p;
        bool found;

        if (rs_packages_find(text, len, "shim-unsigned", "16.1-2", "amd64", &p, &found, &err) == 0 && found)
            rs_repo_package_free(&p);
        break;
    }
    default: {
        rs_service_config c;

        if (rs_service_config_parse(text, len, &c, &err) == 0)
            rs_service_config_free(&c);
        break;
    }
    }
    return 0;
}

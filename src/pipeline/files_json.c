#include "pipeline/files_json.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>




const char *rs_sig_type_name(rs_sig_type t)
{
    return t == SIG_EFI ? "efi" : "linux-module";
}

int rs_valid_package_name(const char *name)
{
    size_t n = strlen(name);

    if (n < 2 || !(islower((unsigned char)name[0]) || isdigit((unsigned char)name[0])))
        return 0;
    for (size_t i = 1; i < n; i++) {
        unsigned char c = (unsigned char)name[i];

        if (!(islower(c) || isdigit(c) || c == '+' || c == '.' || c == '-'))
            return 0;
    }
    return 1;
}

int rs_valid_relative_path(const char *path)
{
    const char *p = path;

    if (!*path || *path == '/' || strlen(path) > 4096)
        return 0;
    while (*p) {
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);

        if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
            return 0;
        for (size_t i = 0; i < len; i++)
            if ((unsigned char)p[i] < 0x20 || p[i] == '\\')
                return 0;
        if (!end)
            break;
        p = end + 1;
        if (!*p)
            return 0;   /* trailing slash */
    }
    return 1;
}

static void package_free(rs_sign_package *p)
{
    free(p->name);
    for (size_t i = 0; i < p->n_trusted_certs; i++)
        free(p->trusted_certs[i]);
    free(p->trusted_certs);
    free(p->files);
}

void rs_files_json_free(rs_files_json *fj)
{
    for (size_t i = 0; i < fj->n_packages; i++)
        package_free(&fj->packages[i]);
    free(fj->packages);
    rs_strpool_free(&fj->paths);
    memset(fj, 0, sizeof(*fj));
}

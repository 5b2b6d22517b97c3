/* files.json read whole, as jansson's tree, the way the reader worked
 * before it streamed: the model a streamed read must agree with, for the
 * unit test and the fuzz target. Shared by both, kept apart from the
 * library's code on purpose. */
#ifndef RS_FILES_JSON_REFERENCE_H
#define RS_FILES_JSON_REFERENCE_H

#include <ctype.h>
#include <jansson.h>
#include <stdbool.h>
#include <string.h>

#include "pipeline/files_json.h"

/* A fingerprint as written (either case, bytes maybe split by ':') against
 * the model's lower-case hex. */
static inline bool reference_fingerprint_equal(const char *written, const char *hex)
{
    for (; written && *written; written++) {
        if (*written == ':')
            continue;
        if (tolower((unsigned char)*written) != *hex++)
            return false;
    }
    return written && !*hex;
}

static inline bool reference_package_equal(const char *name, const json_t *obj, const rs_sign_package *p)
{
    const json_t *files = json_object_get(obj, "files"), *certs = json_object_get(obj, "trusted_certs");

    if (strcmp(name, p->name) || !json_is_array(files) || json_array_size(files) != p->n_files)
        return false;
    if (json_array_size(certs) != p->n_trusted_certs)
        return false;
    for (size_t i = 0; i < p->n_trusted_certs; i++)
        if (!reference_fingerprint_equal(json_string_value(json_array_get(certs, i)), p->trusted_certs[i]))
            return false;
    for (size_t i = 0; i < p->n_files; i++) {
        const json_t *e = json_array_get(files, i);
        const char *type = json_string_value(json_object_get(e, "sig_type"));
        const char *path = json_string_value(json_object_get(e, "file"));

        if (!type || !path || strcmp(path, p->files[i].path) || strcmp(type, rs_sig_type_name(p->files[i].type)))
            return false;
    }
    return true;
}

/* Whether fj is what jansson's tree of text holds: its packages, in
 * order, with their files and fingerprints. */
static inline bool reference_equal(const char *text, size_t len, const rs_files_json *fj)
{
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
    const json_t *map = json_object_get(root, "packages");
    bool ok = json_is_object(root);
    size_t k = 0;
    const char *name;
    json_t *obj;

    if (!map)
        map = root;
    if (ok && json_object_size(map) != fj->n_packages)
        ok = false;
    if (ok)
        json_object_foreach((json_t *)map, name, obj) {
            if (!reference_package_equal(name, obj, &fj->packages[k++])) {
                ok = false;
                break;
            }
        }
    json_decref(root);
    return ok;
}

#endif

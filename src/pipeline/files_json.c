#include "pipeline/files_json.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/cleanup.h"

/* A template lists a kernel's modules at most; this bounds a hostile one. */
#define MAX_ENTRIES 200000


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
    for (size_t i = 0; i < p->n_files; i++)
        free(p->files[i].path);
    free(p->files);
}

void rs_files_json_free(rs_files_json *fj)
{
    for (size_t i = 0; i < fj->n_packages; i++)
        package_free(&fj->packages[i]);
    free(fj->packages);
    memset(fj, 0, sizeof(*fj));
}

static int parse_fingerprint(const char *pkg, const json_t *v, char **out, rs_error *err)
{
    const char *s = json_string_value(v);
    uint8_t raw[32];
    char hex[65];

    if (!s || rs_unhex(s, raw, sizeof(raw)) < 0)
        return rs_fail(err, "package %s: trusted_certs entry is not a SHA-256 fingerprint", pkg);
    rs_hex(raw, sizeof(raw), hex);
    *out = strdup(hex);
    return *out ? 0 : rs_fail(err, "out of memory");
}

static int parse_trusted_certs(rs_sign_package *p, const json_t *arr, rs_error *err)
{
    size_t i;
    json_t *v;

    if (!arr)
        return 0;
    if (!json_is_array(arr))
        return rs_fail(err, "package %s: trusted_certs is not a list", p->name);
    p->trusted_certs = calloc(json_array_size(arr) + 1, sizeof(char *));
    if (!p->trusted_certs)
        return rs_fail(err, "out of memory");
    json_array_foreach(arr, i, v) {
        if (parse_fingerprint(p->name, v, &p->trusted_certs[i], err) < 0)
            return -1;
        p->n_trusted_certs++;
    }
    return 0;
}

static int parse_file(rs_sign_package *p, const json_t *entry, size_t index, rs_error *err)
{
    const char *type = json_string_value(json_object_get(entry, "sig_type"));
    const char *path = json_string_value(json_object_get(entry, "file"));
    rs_sign_file *f = &p->files[p->n_files];

    if (!json_is_object(entry) || !type || !path)
        return rs_fail(err, "package %s: files[%zu] needs string \"sig_type\" and \"file\"", p->name, index);
    if (!strcmp(type, "efi"))
        f->type = SIG_EFI;
    else if (!strcmp(type, "linux-module"))
        f->type = SIG_LINUX_MODULE;
    else
        return rs_fail(err, "package %s: %s: unknown sig_type '%s' (efi or linux-module)", p->name, path, type);
    if (!rs_valid_relative_path(path))
        return rs_fail(err, "package %s: '%s': file paths must be relative, without '..' or empty components",
                       p->name, path);
    f->path = strdup(path);
    if (!f->path)
        return rs_fail(err, "out of memory");
    p->n_files++;
    return 0;
}

static int parse_package(rs_sign_package *p, const char *name, const json_t *obj, rs_error *err)
{
    const json_t *files = json_object_get(obj, "files");
    size_t i;
    json_t *v;

    if (!rs_valid_package_name(name))
        return rs_fail(err, "'%s' is not a valid package name", name);
    p->name = strdup(name);
    if (!p->name)
        return rs_fail(err, "out of memory");
    if (!json_is_object(obj) || !json_is_array(files))
        return rs_fail(err, "package %s: needs a \"files\" list", name);
    if (json_array_size(files) > MAX_ENTRIES)
        return rs_fail(err, "package %s: too many files", name);
    if (parse_trusted_certs(p, json_object_get(obj, "trusted_certs"), err) < 0)
        return -1;
    p->files = calloc(json_array_size(files) + 1, sizeof(*p->files));
    if (!p->files)
        return rs_fail(err, "out of memory");
    json_array_foreach(files, i, v)
        if (parse_file(p, v, i, err) < 0)
            return -1;
    return 0;
}

/* The package map, whichever of the three shapes holds it. */
static const json_t *package_map(const json_t *root, rs_error *err)
{
    const json_t *packages = json_object_get(root, "packages");
    const json_t *version = json_object_get(root, "version");

    if (version && !(json_is_string(version) && !strcmp(json_string_value(version), "2")))
        return rs_fail(err, "unsupported files.json version"), NULL;
    if (packages) {
        if (!json_is_object(packages))
            return rs_fail(err, "\"packages\" is not an object"), NULL;
        return packages;
    }
    if (version)
        return rs_fail(err, "version 2 files.json without \"packages\""), NULL;
    return root;
}

int rs_files_json_parse(const char *text, size_t len, rs_files_json *out, rs_error *err)
{
    _cleanup_(json_decrefp) json_t *root = NULL;
    const json_t *map;
    json_error_t jerr;
    const char *name;
    json_t *obj;

    memset(out, 0, sizeof(*out));
    root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return rs_fail(err, "invalid JSON at line %d: %s", jerr.line, jerr.text);
    if (!json_is_object(root))
        return rs_fail(err, "top level is not an object");
    map = package_map(root, err);
    if (!map)
        return -1;
    if (json_object_size(map) == 0)
        return rs_fail(err, "no packages listed");
    out->packages = calloc(json_object_size(map), sizeof(*out->packages));
    if (!out->packages)
        return rs_fail(err, "out of memory");
    json_object_foreach((json_t *)map, name, obj) {
        int rc = parse_package(&out->packages[out->n_packages], name, obj, err);

        out->n_packages++;
        if (rc < 0) {
            rs_files_json_free(out);
            return -1;
        }
    }
    return 0;
}

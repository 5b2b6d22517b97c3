/* A signing template's files.json: it comes inside the template package,
 * so a hostile uploader writes it. Whatever the parser accepts must hold
 * only valid package names, lower-case SHA-256 fingerprints and paths
 * that stay inside the package root, checked here independently of the
 * parser's own validators. It is read as a stream: what it accepts must
 * be valid JSON to jansson and the model of jansson's whole tree, and the
 * reads may end anywhere (the first byte picks their length) without
 * changing the result or the message. The validators also get the raw
 * input. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "../unit/files_json_reference.h"
#include "fuzz_keys.h"
#include "pipeline/files_json.h"

/* The path rules, restated without sharing code with the library: no
 * leading '/', no empty, "." or ".." component, no control character or
 * backslash. */
static bool path_stays_inside(const char *path)
{
    const char *p = path;

    if (!*p || *p == '/')
        return false;
    for (;;) {
        size_t len = strcspn(p, "/");

        if (len == 0 || !strncmp(p, ".", len) || !strncmp(p, "..", len))
            return false;
        for (size_t i = 0; i < len; i++)
            if ((unsigned char)p[i] < 0x20 || p[i] == '\\')
                return false;
        if (!p[len])
            return true;
        p += len + 1;
    }
}

static bool is_fingerprint(const char *s)
{
    return strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

static void check_parsed(const rs_files_json *fj)
{
    if (fj->n_packages == 0)
        fuzz_bug("accepted a files.json without packages", NULL);
    for (size_t i = 0; i < fj->n_packages; i++) {
        const rs_sign_package *p = &fj->packages[i];

        if (!p->name || !rs_valid_package_name(p->name))
            fuzz_bug("accepted an invalid package name", p->name);
        for (size_t j = 0; j < p->n_trusted_certs; j++)
            if (!is_fingerprint(p->trusted_certs[j]))
                fuzz_bug("trusted_certs entry is not a normalised fingerprint", p->trusted_certs[j]);
        for (size_t j = 0; j < p->n_files; j++) {
            const rs_sign_file *f = &p->files[j];

            if (!rs_valid_relative_path(f->path) || !path_stays_inside(f->path))
                fuzz_bug("accepted a path that leaves the package root", f->path);
            if (f->type != SIG_EFI && f->type != SIG_LINUX_MODULE)
                fuzz_bug("unknown sig_type accepted", rs_sig_type_name(f->type));
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* The same input in reads of `chunk` bytes: the same answer. */
static void check_chunked(const char *json, size_t len, size_t chunk, int rc, const rs_error *err)
{
    rs_files_json fj;
    rs_error again = { 0 };

    if (rs_files_json_parse_chunked(json, len, chunk, &fj, &again) != rc)
        fuzz_bug("short reads changed whether it was accepted", again.msg);
    if (rc == 0)
        rs_files_json_free(&fj);
    else if (strcmp(err->msg, again.msg))
        fuzz_bug("short reads changed the message", again.msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    _cleanup_free_ char *text = strndup((const char *)data, size);
    const char *json = (const char *)data + (size ? 1 : 0);
    size_t len = size ? size - 1 : 0, chunk = size ? data[0] % 17 + 1 : 1;
    rs_files_json fj;
    rs_error err = { 0 };
    int rc;

    if (!text)
        return 0;
    if ((rc = rs_files_json_parse(json, len, &fj, &err)) == 0) {
        check_parsed(&fj);
        if (!reference_equal(json, len, &fj))
            fuzz_bug("accepted what is not jansson's model of it, or not JSON", NULL);
        rs_files_json_free(&fj);
    } else if (!err.msg[0]) {
        fuzz_bug("refused without a message", NULL);
    }
    check_chunked(json, len, chunk, rc, &err);
    /* Up to the first NUL, the input as a name and as a path. */
    (void)rs_valid_package_name(text);
    if (rs_valid_relative_path(text) && !path_stays_inside(text))
        fuzz_bug("rs_valid_relative_path accepted an escaping path", text);
    return 0;
}

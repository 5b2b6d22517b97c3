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

/* What a sink is handed: the model's files, one after the other. */
typedef struct sunk {
    const rs_files_json *model;   /* NULL when the input was refused */
    size_t pkg, file;             /* the next file the model expects */
    bool differs;
} sunk;

static int sink_add(void *ctx, size_t pkg, const rs_sign_file *f, rs_error *err)
{
    sunk *s = ctx;
    const rs_sign_package *p;

    (void)err;
    if (!s->model)
        return 0;
    while (s->pkg < s->model->n_packages && s->file == s->model->packages[s->pkg].n_files)
        s->pkg++, s->file = 0;
    if (s->pkg >= s->model->n_packages || pkg != s->pkg) {
        s->differs = true;
        return 0;
    }
    p = &s->model->packages[s->pkg];
    s->differs |= f->type != p->files[s->file].type || strcmp(f->path, p->files[s->file].path) != 0;
    s->file++;
    return 0;
}

/* Read into a sink: the same answer, the same files in the same order,
 * and the packages' counts and sig_types, without their files. */
static void check_sink(const char *json, size_t len, int rc, const rs_files_json *model, const rs_error *err)
{
    sunk s = { .model = rc == 0 ? model : NULL };
    rs_files_json_sink sink = { sink_add, &s };
    rs_files_json fj;
    rs_error again = { 0 };

    if (rs_files_json_parse_to(json, len, &sink, &fj, &again) != rc)
        fuzz_bug("a sink changed whether it was accepted", again.msg);
    if (rc != 0) {
        if (strcmp(err->msg, again.msg))
            fuzz_bug("a sink changed the message", again.msg);
        return;
    }
    for (size_t p = 0; p < fj.n_packages; p++) {
        unsigned types = 0;

        for (size_t f = 0; f < model->packages[p].n_files; f++)
            types |= 1u << model->packages[p].files[f].type;
        if (fj.packages[p].files || fj.packages[p].n_files != model->packages[p].n_files ||
            fj.packages[p].types != types || model->packages[p].types != types)
            fuzz_bug("a sink changed a package's counts or sig_types", fj.packages[p].name);
    }
    while (s.pkg < model->n_packages && s.file == model->packages[s.pkg].n_files)
        s.pkg++, s.file = 0;
    if (s.differs || s.pkg != model->n_packages)
        fuzz_bug("a sink was not handed the model's files in order", NULL);
    rs_files_json_free(&fj);
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
        check_sink(json, len, rc, &fj, &err);
        rs_files_json_free(&fj);
    } else if (!err.msg[0]) {
        fuzz_bug("refused without a message", NULL);
    } else {
        check_sink(json, len, rc, NULL, &err);
    }
    check_chunked(json, len, chunk, rc, &err);
    /* Up to the first NUL, the input as a name and as a path. */
    (void)rs_valid_package_name(text);
    if (rs_valid_relative_path(text) && !path_stays_inside(text))
        fuzz_bug("rs_valid_relative_path accepted an escaping path", text);
    return 0;
}

/* The OVMF variable store reader, and writes into whatever it accepted:
 * db, then a variable the store already had. varstore.h promises that a
 * write appends a new copy and marks the old one deleted, so each write
 * is checked as the firmware would see it: the variable reads back with
 * exactly what was written, every other variable and every other byte is
 * as it was, and the image ('efi apply' and 'efi enroll' save it as it
 * is) parses again to the same variables. Failures must carry a message.
 * The same bytes as a file: varstore_load reads only the volume its header
 * claims, and must accept what varstore_parse accepts, find the same
 * variables, and varstore_write them back as the file was, byte for byte. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_keys.h"
#include "uefi/varstore.h"

#define VAR_HEADER 60

static const uint8_t ts[EFI_TIME_SIZE] = { 0xe8, 0x07, 1, 2 };
static const uint8_t payload_db[40] = { 1, 2, 3 };
static const uint8_t payload_other[7] = { 4, 5, 6, 7, 8, 9, 10 };

static bool same_record(const vs_var *a, const vs_var *b)
{
    return a->off == b->off && a->state == b->state && a->active == b->active && a->attributes == b->attributes &&
           !memcmp(a->timestamp, b->timestamp, EFI_TIME_SIZE) && !strcmp(a->name, b->name) &&
           efi_guid_equal(&a->guid, &b->guid) && a->data_off == b->data_off && a->data_len == b->data_len;
}

/* What was written in memory is what a fresh parse of the image finds. */
static void check_reparse(const varstore *vs)
{
    _cleanup_varstore_ varstore again;
    rs_error err;

    if (varstore_parse(vs->image.data, vs->image.len, &again, &err) < 0)
        fuzz_bug("a written store does not parse again", err.msg);
    if (again.n != vs->n || again.free_off != vs->free_off)
        fuzz_bug("a written store parses to a different number of variables", NULL);
    for (size_t i = 0; i < vs->n; i++)
        if (!same_record(&vs->vars[i], &again.vars[i]))
            fuzz_bug("a written store parses to different variables", vs->vars[i].name);
}

/* What a lookup sees of a variable: attributes, time and data. */
static bool same_value(const varstore *a, const vs_var *x, const varstore *b, const vs_var *y)
{
    return x->attributes == y->attributes && !memcmp(x->timestamp, y->timestamp, EFI_TIME_SIZE) &&
           x->data_len == y->data_len && !memcmp(varstore_data(a, x), varstore_data(b, y), x->data_len);
}

static bool is_target(const vs_var *v, const char *name, const efi_guid *guid)
{
    return !strcmp(v->name, name) && efi_guid_equal(&v->guid, guid);
}

/* Every variable but the one written looks up as before, and none appears. */
static void check_others(const varstore *before, const varstore *after, const char *name, const efi_guid *guid)
{
    for (size_t i = 0; i < before->n; i++) {
        const vs_var *v = &before->vars[i], *w;

        if (!v->active || is_target(v, name, guid))
            continue;
        w = varstore_find(after, v->name, &v->guid);
        if (!w || !same_value(before, varstore_find(before, v->name, &v->guid), after, w))
            fuzz_bug("a write changed another variable", v->name);
    }
    for (size_t i = 0; i < after->n; i++)
        if (after->vars[i].active && !is_target(&after->vars[i], name, guid) &&
            !varstore_find(before, after->vars[i].name, &after->vars[i].guid))
            fuzz_bug("a write made another variable appear", after->vars[i].name);
}

/* Outside the new record, only the state of an old copy may change. */
static void check_bytes(const varstore *before, const varstore *after, const char *name, const efi_guid *guid,
                        uint64_t record_end)
{
    if (after->image.len != before->image.len)
        fuzz_bug("a write changed the size of the store", NULL);
    for (uint64_t i = 0; i < before->image.len; i++) {
        bool state = false;

        if (after->image.data[i] == before->image.data[i] || (i >= before->free_off && i < record_end))
            continue;
        for (size_t j = 0; j < before->n; j++)
            state |= before->vars[j].active && i == before->vars[j].off + 2 && is_target(&before->vars[j], name, guid);
        if (!state)
            fuzz_bug("a write changed a byte outside its record and its old copy's state", name);
    }
}

static void check_read_back(const varstore *vs, const char *name, const efi_guid *guid, const uint8_t *data,
                            size_t len)
{
    const vs_var *v = varstore_find(vs, name, guid);

    if (!v || v->attributes != EFI_SECURE_VAR_ATTRS || memcmp(v->timestamp, ts, EFI_TIME_SIZE) ||
        v->data_len != len || memcmp(varstore_data(vs, v), data, len))
        fuzz_bug("a written variable does not read back as written", name);
}

/* Returns whether the write was made; after a refused one vs is not
 * promised to be usable. */
static bool write_and_check(varstore *vs, const char *name, const efi_guid *guid, const uint8_t *data, size_t len)
{
    _cleanup_varstore_ varstore before;
    uint64_t record_end;
    rs_error err = { 0 };

    /* A snapshot, and the first check that the image parses as vs says. */
    check_reparse(vs);
    if (varstore_parse(vs->image.data, vs->image.len, &before, &err) < 0)
        fuzz_die("snapshot", err.msg);
    if (varstore_set(vs, name, guid, EFI_SECURE_VAR_ATTRS, ts, data, len, &err) < 0) {
        if (!err.msg[0])
            fuzz_bug("varstore_set failed without a message", name);
        return false;
    }
    record_end = before.free_off + VAR_HEADER + 2 * (strlen(name) + 1) + len;
    check_read_back(vs, name, guid, data, len);
    if (vs->n != before.n + 1)
        fuzz_bug("a write added other than one variable record", name);
    check_others(&before, vs, name, guid);
    check_bytes(&before, vs, name, guid, record_end);
    check_reparse(vs);
    return true;
}

/* The first live variable with a plain ASCII name, which varstore_set can
 * write back under the same name. */
static const vs_var *ascii_var(const varstore *vs)
{
    for (size_t i = 0; i < vs->n; i++) {
        const char *p = vs->vars[i].name;

        while (*p >= 0x20 && *p < 0x7f)
            p++;
        if (vs->vars[i].active && !*p)
            return &vs->vars[i];
    }
    return NULL;
}

static char out_dir[] = "/tmp/fuzz-varstore-XXXXXX", in_path[64], out_path[64];
static int in_fd = -1;

/* The corpus replay runs under ctest on every build: leave /tmp as found. */
static void remove_dir(void)
{
    unlink(out_path);
    rmdir(out_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    in_fd = fuzz_memfd("fuzz-varstore-in", in_path, sizeof(in_path));
    if (!mkdtemp(out_dir))
        fuzz_die("mkdtemp", out_dir);
    snprintf(out_path, sizeof(out_path), "%s/out.fd", out_dir);
    atexit(remove_dir);
    return 0;
}

/* The bytes as a file, loaded and written back. */
static void check_load(const uint8_t *data, size_t size, const varstore *parsed, bool parsed_ok)
{
    _cleanup_varstore_ varstore vs;
    _cleanup_bytes_ rs_bytes back = { 0 };
    rs_error err = { 0 };
    bool ok;

    fuzz_memfd_fill(in_fd, data, size);
    ok = varstore_load(in_path, &vs, &err) == 0;
    if (ok != parsed_ok)
        fuzz_bug(ok ? "varstore_load accepts what varstore_parse refuses"
                    : "varstore_load refuses what varstore_parse accepts",
                 err.msg);
    if (!ok) {
        if (!err.msg[0])
            fuzz_bug("varstore_load failed without a message", NULL);
        return;
    }
    if (vs.n != parsed->n)
        fuzz_bug("varstore_load finds a different number of variables", NULL);
    for (size_t i = 0; i < vs.n; i++)
        if (!same_record(&vs.vars[i], &parsed->vars[i]))
            fuzz_bug("varstore_load finds different variables", vs.vars[i].name);
    if (varstore_write(&vs, out_path, &err) < 0 || rs_read_file(out_path, size + 1, &back, &err) < 0)
        fuzz_bug("a loaded store cannot be written back", err.msg);
    if (back.len != size || memcmp(back.data, data, size))
        fuzz_bug("a loaded store written back differs from its file", NULL);
    unlink(out_path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    varstore vs;
    rs_error err = { 0 };
    const vs_var *v;
    char name[sizeof(v->name)];
    efi_guid guid;

    if (varstore_parse(data, size, &vs, &err) < 0) {
        if (!err.msg[0])
            fuzz_bug("varstore_parse failed without a message", NULL);
        varstore_free(&vs);
        check_load(data, size, NULL, false);
        return 0;
    }
    check_load(data, size, &vs, true);
    /* Copied: the write re-parses the store, which moves vs.vars. */
    if (write_and_check(&vs, "db", &efi_guid_image_security, payload_db, sizeof(payload_db)) && (v = ascii_var(&vs))) {
        memcpy(name, v->name, sizeof(name));
        guid = v->guid;
        write_and_check(&vs, name, &guid, payload_other, sizeof(payload_other));
    }
    varstore_free(&vs);
    return 0;
}

#include "uefi/sbat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/pe/pe_layout.h"
#include "uefi/efi.h"

#define LEVEL_HEADER 12
#define MAX_COMPONENT 128

void sbat_image_free(sbat_image *s)
{
    free(s->sbat);
    free(s->previous);
    free(s->latest);
    s->sbat = s->previous = s->latest = NULL;
}

static char *string_at(const rs_bytes *b, size_t off)
{
    const uint8_t *nul;

    if (off >= b->len)
        return NULL;
    nul = memchr(b->data + off, '\0', b->len - off);
    return strndup((const char *)b->data + off, nul ? (size_t)(nul - (b->data + off)) : b->len - off);
}

static int parse_level(const rs_bytes *sec, sbat_image *s, rs_error *err)
{
    uint32_t prev, latest;

    if (sec->len < LEVEL_HEADER)
        return rs_fail(err, ".sbatlevel section is too short (%zu bytes)", sec->len);
    prev = efi_le32(sec->data + 4);
    latest = efi_le32(sec->data + 8);
    if ((uint64_t)prev + 4 >= sec->len || (uint64_t)latest + 4 >= sec->len)
        return rs_fail(err, ".sbatlevel offsets %u and %u lie outside the section (%zu bytes)", prev, latest,
                       sec->len);
    s->previous = string_at(sec, (size_t)prev + 4);
    s->latest = string_at(sec, (size_t)latest + 4);
    if (!s->previous || !s->latest)
        return rs_fail(err, "out of memory");
    return 0;
}

int sbat_from_image(rs_image *img, sbat_image *s, rs_error *err)
{
    _cleanup_bytes_ rs_bytes sec = { 0 }, level = { 0 };
    int found;

    memset(s, 0, sizeof(*s));
    found = pe_image_section(img, ".sbat", &sec, err);
    if (found < 0)
        return -1;
    if (found && !(s->sbat = string_at(&sec, 0)) && sec.len)
        return rs_fail(err, "out of memory");
    found = pe_image_section(img, ".sbatlevel", &level, err);
    if (found < 0)
        return -1;
    return found ? parse_level(&level, s, err) : 0;
}

int sbat_image_load(const char *path, sbat_image *s, rs_error *err)
{
    _cleanup_image_ rs_image img = { .in.fd = -1 };

    if (rs_image_open(&img, path, err) < 0)
        return -1;
    if (sbat_from_image(&img, s, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

/* Component name and generation of one CSV line; 0 when the line is empty. */
static int parse_line(const char *line, size_t len, char name[MAX_COMPONENT], unsigned long *gen, rs_error *err)
{
    const char *comma = memchr(line, ',', len);
    char num[24];
    size_t nlen, glen;
    char *end;

    if (len == 0)
        return 0;
    if (!comma || (size_t)(comma - line) >= MAX_COMPONENT)
        return rs_fail(err, "SBAT line '%.*s' has no component,generation", (int)(len > 80 ? 80 : len), line);
    nlen = (size_t)(comma - line);
    memcpy(name, line, nlen);
    name[nlen] = '\0';
    glen = strcspn(comma + 1, ",\n");
    if (glen == 0 || glen >= sizeof(num) || comma + 1 + glen > line + len)
        return rs_fail(err, "SBAT entry '%s' has an invalid generation", name);
    memcpy(num, comma + 1, glen);
    num[glen] = '\0';
    /* Plain decimal digits only: what shim's atoi() makes of a sign,
     * spaces or other text is not worth predicting. */
    if (strspn(num, "0123456789") != glen)
        return rs_fail(err, "SBAT entry '%s' has an invalid generation '%s'", name, num);
    errno = 0;
    *gen = strtoul(num, &end, 10);
    if (errno)
        return rs_fail(err, "SBAT entry '%s' has an invalid generation '%s'", name, num);
    /* shim keeps a generation in a UINT16, so 65537 compares as 1. */
    *gen &= 0xffff;
    return 1;
}

typedef int (*line_visit)(void *ctx, const char *name, unsigned long gen, rs_error *err);

static int each_line(const char *csv, line_visit visit, void *ctx, rs_error *err)
{
    while (*csv) {
        size_t len = strcspn(csv, "\n");
        char name[MAX_COMPONENT];
        unsigned long gen = 0;
        int r = parse_line(csv, len, name, &gen, err);

        if (r < 0 || (r > 0 && visit(ctx, name, gen, err) < 0))
            return -1;
        csv += len + (csv[len] == '\n');
    }
    return 0;
}

typedef struct checker {
    const char *component;
    unsigned long min_gen;
    char *why;
    size_t cap;
    int revoked;
} checker;

static int check_image_entry(void *ctx, const char *name, unsigned long gen, rs_error *err)
{
    checker *c = ctx;

    if (!strcmp(name, c->component) && gen < c->min_gen && !c->revoked) {
        snprintf(c->why, c->cap, "component %s generation %lu is revoked (SBAT level requires %lu)", name, gen,
                 c->min_gen);
        c->revoked = 1;
    }
    return 0;
}

typedef struct level_ctx {
    const char *image_sbat;
    checker c;
} level_ctx;

static int check_level_entry(void *ctx, const char *name, unsigned long gen, rs_error *err)
{
    level_ctx *l = ctx;

    l->c.component = name;
    l->c.min_gen = gen;
    return each_line(l->image_sbat, check_image_entry, &l->c, err);
}

int sbat_check(const char *image_sbat, const char *level, char *why, size_t cap, rs_error *err)
{
    level_ctx l = { image_sbat, { .why = why, .cap = cap } };

    if (each_line(level, check_level_entry, &l, err) < 0)
        return -1;
    return l.c.revoked;
}

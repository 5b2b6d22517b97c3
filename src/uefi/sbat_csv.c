/* SBAT CSV as shim 16.1 reads it, and the comparison of an image's .sbat
 * with a level. Each rule names the shim function it follows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "uefi/sbat.h"

/* sbat.h: SBAT_SECTION_COLUMNS (struct sbat_section_entry has 6 fields)
 * and SBAT_VAR_COLUMNS (3), of which SBAT_VAR_REQUIRED_COLUMNS (2). */
#define IMAGE_COLUMNS 6
#define LEVEL_COLUMNS 3
#define LEVEL_REQUIRED 2
#define UTF8_BOM "\xef\xbb\xbf"

typedef struct sbat_row {
    char *col[IMAGE_COLUMNS];
    size_t n;
    size_t line;             /* 1-based, for messages */
} sbat_row;

typedef int (*row_visit)(void *ctx, const sbat_row *row, rs_error *err);

/* csv.c parse_csv_line: up to max tokens split at ','; a run of commas
 * gives empty tokens, and what lies past the last wanted token is
 * ignored. */
static void split_columns(char *line, size_t max, sbat_row *row)
{
    char *p = line;

    row->n = 0;
    while (row->n < max) {
        char *comma = strchr(p, ',');

        row->col[row->n++] = p;
        if (!comma)
            break;
        *comma = '\0';
        p = comma + 1;
    }
}

/* csv.c parse_csv_data: a UTF-8 BOM at the start is skipped, lines end at
 * CR or LF (runs of them make no empty rows), and the data ends at its
 * first NUL. */
static int walk_rows(const char *data, size_t max, row_visit visit, void *ctx, rs_error *err)
{
    _cleanup_free_ char *copy = strdup(data);
    char *line;
    size_t lineno = 0;

    if (!copy)
        return rs_fail(err, "out of memory");
    line = copy + (strncmp(copy, UTF8_BOM, 3) == 0 ? 3 : 0);
    while (*line) {
        size_t len = strcspn(line, "\r\n");
        char *next = line + len;
        sbat_row row = { .line = ++lineno };
        int r;

        next += strspn(next, "\r\n");
        if (len == 0) {
            line = next;
            continue;
        }
        line[len] = '\0';
        split_columns(line, max, &row);
        r = visit(ctx, &row, err);
        if (r != 0)
            return r;
        line = next;
    }
    return 0;
}

/* sbat.c verify_single_entry: atoi, which shim maps to its
 * AsciiStrDecimalToUintn (Cryptlib/SysCall/BaseStrings.c: spaces and tabs
 * skipped, then decimal digits, anything else ends it, so a non-digit
 * gives 0), stored in a UINT16. */
static uint16_t shim_atoi(const char *s)
{
    uint16_t v = 0;

    s += strspn(s, " \t");
    for (; *s >= '0' && *s <= '9'; s++)
        v = (uint16_t)(v * 10u + (unsigned)(*s - '0'));
    return v;
}

/* Rows with too few columns, or an empty one, make shim refuse the data
 * (sbat.c parse_sbat_section, parse_sbat_var_data). */
static const char *row_problem(const sbat_row *row, size_t required)
{
    if (row->n < required)
        return "too few columns";
    for (size_t i = 0; i < row->n; i++)
        if (!row->col[i][0])
            return "an empty column";
    return NULL;
}

typedef struct level_row {
    char *name;
    uint16_t gen;
} level_row;

typedef struct level_list {
    level_row *rows;
    size_t n;
} level_list;

static void level_list_free(level_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->rows[i].name);
    free(l->rows);
}

static int add_level_row(void *ctx, const sbat_row *row, rs_error *err)
{
    level_list *l = ctx;
    const char *problem = row_problem(row, LEVEL_REQUIRED);
    level_row *grown;

    if (problem)
        return rs_fail(err, "SBAT level line %zu ('%.60s') has %s: shim needs component,generation[,date]",
                       row->line, row->col[0], problem);
    grown = reallocarray(l->rows, l->n + 1, sizeof(*grown));
    if (!grown)
        return rs_fail(err, "out of memory");
    l->rows = grown;
    if (!(grown[l->n].name = strdup(row->col[0])))
        return rs_fail(err, "out of memory");
    grown[l->n++].gen = shim_atoi(row->col[1]);
    return 0;
}

typedef struct judge {
    const level_list *level;
    char *why;
    size_t cap;
} judge;

/* sbat.c verify_sbat_helper: for each image row the first level row with
 * the same component decides; a lower generation is revoked. */
static int judge_row(void *ctx, const sbat_row *row, rs_error *err)
{
    judge *j = ctx;
    const char *problem = row_problem(row, IMAGE_COLUMNS);
    uint16_t gen;

    (void)err;
    if (problem) {
        snprintf(j->why, j->cap, ".sbat line %zu ('%.60s') has %s, and shim refuses it (needs 6 non-empty)",
                 row->line, row->col[0], problem);
        return 1;
    }
    gen = shim_atoi(row->col[1]);
    for (size_t i = 0; i < j->level->n; i++) {
        const level_row *l = &j->level->rows[i];

        if (strcmp(l->name, row->col[0]) != 0)
            continue;
        if (gen >= l->gen)
            return 0;
        snprintf(j->why, j->cap, "component %s generation %u is revoked (SBAT level requires %u)", l->name, gen,
                 l->gen);
        return 1;
    }
    return 0;
}

int sbat_check(const char *image_sbat, const char *level, char *why, size_t cap, rs_error *err)
{
    level_list l = { 0 };
    judge j = { &l, why, cap };
    int r;

    if (cap)
        why[0] = '\0';
    r = walk_rows(level, LEVEL_COLUMNS, add_level_row, &l, err);
    /* sbat.c verify_sbat_helper: an empty level revokes nothing. */
    if (r == 0 && l.n)
        r = walk_rows(image_sbat, IMAGE_COLUMNS, judge_row, &j, err);
    level_list_free(&l);
    return r;
}

int sbat_level_check(const char *level, rs_error *err)
{
    level_list l = { 0 };
    int r = walk_rows(level, LEVEL_COLUMNS, add_level_row, &l, err);

    level_list_free(&l);
    return r;
}

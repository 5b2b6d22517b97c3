/* deb822 paragraphs (repo.h), as Release and Packages files hold them. */
#include "service/repo.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Field names in one paragraph: Debian's own files have a few dozen. */
#define MAX_FIELDS 1024

void rs_deb822_free(rs_deb822 *paras, size_t n)
{
    for (size_t i = 0; paras && i < n; i++) {
        for (size_t f = 0; f < paras[i].n; f++) {
            free(paras[i].fields[f].name);
            free(paras[i].fields[f].value);
        }
        free(paras[i].fields);
    }
    free(paras);
}

const char *rs_deb822_get(const rs_deb822 *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (!strcasecmp(p->fields[i].name, name))
            return p->fields[i].value;
    return NULL;
}

bool rs_deb822_blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!isspace((unsigned char)s[i]))
            return false;
    return true;
}

static int add_field(rs_deb822 *p, const char *line, size_t len, rs_error *err)
{
    const char *colon = memchr(line, ':', len);
    rs_deb822_field *grown;
    size_t vstart;

    if (!colon || colon == line)
        return rs_fail(err, "'%.*s' is not a 'Field: value' line", (int)(len > 60 ? 60 : len), line);
    if (p->n >= MAX_FIELDS || !(grown = realloc(p->fields, (p->n + 1) * sizeof(*grown))))
        return rs_fail(err, "too many fields");
    p->fields = grown;
    vstart = (size_t)(colon - line) + 1;
    while (vstart < len && (line[vstart] == ' ' || line[vstart] == '\t'))
        vstart++;
    grown[p->n].name = strndup(line, (size_t)(colon - line));
    grown[p->n].value = strndup(line + vstart, len - vstart);
    grown[p->n].len = len - vstart;
    grown[p->n].cap = len - vstart + 1;
    p->n++;
    if (!grown[p->n - 1].name || !grown[p->n - 1].value)
        return rs_fail(err, "out of memory");
    return 0;
}

/* Appends in place with room to spare: a Release file's checksum fields
 * run to thousands of lines, and copying the value for each would make
 * reading one quadratic (found by fuzz_requests: 0.25 s for 9 KB). */
static int continue_field(rs_deb822 *p, const char *line, size_t len, rs_error *err)
{
    rs_deb822_field *f;
    size_t need;

    if (p->n == 0)
        return rs_fail(err, "a continuation line before any field");
    f = &p->fields[p->n - 1];
    need = f->len + 1 + (len - 1) + 1;
    if (need > f->cap) {
        size_t cap = need > 2 * f->cap ? need : 2 * f->cap;
        char *grown = realloc(f->value, cap);

        if (!grown)
            return rs_fail(err, "out of memory");
        f->value = grown;
        f->cap = cap;
    }
    f->value[f->len++] = '\n';
    memcpy(f->value + f->len, line + 1, len - 1);
    f->len += len - 1;
    f->value[f->len] = '\0';
    return 0;
}

static int new_para(rs_deb822 **paras, size_t *n, rs_error *err)
{
    rs_deb822 *grown = realloc(*paras, (*n + 1) * sizeof(*grown));

    if (!grown)
        return rs_fail(err, "out of memory");
    grown[*n] = (rs_deb822){ 0 };
    *paras = grown;
    (*n)++;
    return 0;
}

static int parse_line(const char *line, size_t len, bool *open, rs_deb822 **paras, size_t *n, rs_error *err)
{
    if (rs_deb822_blank(line, len)) {
        *open = false;
        return 0;
    }
    if (line[0] == '#')
        return 0;
    if (line[0] == ' ' || line[0] == '\t')
        return *open ? continue_field(&(*paras)[*n - 1], line, len, err) : rs_fail(err, "a continuation line starts a paragraph");
    if (!*open) {
        if (new_para(paras, n, err) < 0)
            return -1;
        *open = true;
    }
    return add_field(&(*paras)[*n - 1], line, len, err);
}

int rs_deb822_parse(const char *text, size_t len, rs_deb822 **paras, size_t *n, rs_error *err)
{
    size_t start = 0, lineno = 0;
    bool open = false;

    *paras = NULL;
    *n = 0;
    if (memchr(text, '\0', len))
        return rs_fail(err, "contains a NUL byte");
    while (start < len) {
        const char *nl = memchr(text + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - text) : len, l = end - start;

        lineno++;
        if (l && text[start + l - 1] == '\r')
            l--;
        if (parse_line(text + start, l, &open, paras, n, err) < 0) {
            rs_deb822_free(*paras, *n);
            *paras = NULL;
            *n = 0;
            return rs_error_prefix(err, "line %zu", lineno);
        }
        start = end + 1;
    }
    return 0;
}

/* roff for the man pages: escaping, lines, paragraphs and examples. */
#include "cli/doc_roff.h"

#include <stdbool.h>
#include <string.h>

/* Escapes text for roff. A '-' starting a word (an option) is a minus
 * sign; inside a word (sign-template) it stays a hyphen. */
void roff_text(FILE *f, const char *s, size_t len)
{
    if (len && (s[0] == '.' || s[0] == '\''))
        fputs("\\&", f);
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool word_start = i == 0 || strchr(" -[(|=", s[i - 1]);

        if (c == '\\')
            fputs("\\e", f);
        else if (c == '-' && word_start)
            fputs("\\-", f);
        else
            fputc(c, f);
    }
}

void roff_line(FILE *f, const char *s, size_t len)
{
    roff_text(f, s, len);
    fputc('\n', f);
}

void roff_lines(FILE *f, const char *s)
{
    while (*s) {
        size_t n = strcspn(s, "\n");

        roff_line(f, s, n);
        s += n + (s[n] == '\n');
    }
}

/* Length of the paragraph starting at s (up to a blank line or the end). */
size_t paragraph_len(const char *s)
{
    const char *end = strstr(s, "\n\n");

    return end ? (size_t)(end - s) : strlen(s);
}

static bool has_indented_line(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((i == 0 || s[i - 1] == '\n') && s[i] == ' ')
            return true;
    return false;
}

/* Writes a paragraph; one laid out with indentation keeps its lines. */
void roff_paragraph(FILE *f, const char *s, size_t len)
{
    bool keep_lines = has_indented_line(s, len);

    fputs(keep_lines ? ".PP\n.nf\n" : ".PP\n", f);
    while (len) {
        const char *nl = memchr(s, '\n', len);
        size_t n = nl ? (size_t)(nl - s) : len;

        roff_line(f, s, n);
        s += n;
        len -= n;
        if (len) {
            s++;
            len--;
        }
    }
    if (keep_lines)
        fputs(".fi\n", f);
}

void roff_description(FILE *f, const char *s)
{
    while (*s) {
        size_t n = paragraph_len(s);

        roff_paragraph(f, s, n);
        s += n;
        while (*s == '\n')
            s++;
    }
}

void roff_example(FILE *f, const char *example)
{
    fputs(".PP\n.nf\n.RS 4\n", f);
    roff_lines(f, example);
    fputs(".RE\n.fi\n", f);
}

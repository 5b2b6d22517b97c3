/* roff for the man pages (doc_man.c): text escaped so that roff prints it
 * as written. */
#ifndef RS_DOC_ROFF_H
#define RS_DOC_ROFF_H

#include <stddef.h>
#include <stdio.h>

/* s[0..len) escaped; a '-' starting a word is a minus sign. */
void roff_text(FILE *f, const char *s, size_t len);
/* The same, then a newline. */
void roff_line(FILE *f, const char *s, size_t len);
/* Each line of s as a roff line. */
void roff_lines(FILE *f, const char *s);
/* Length of the paragraph starting at s (up to a blank line or the end). */
size_t paragraph_len(const char *s);
/* A paragraph; one laid out with indentation keeps its lines. */
void roff_paragraph(FILE *f, const char *s, size_t len);
/* Every paragraph of s. */
void roff_description(FILE *f, const char *s);
/* An example, indented and kept as written. */
void roff_example(FILE *f, const char *example);

#endif

/* The renderers behind `reprosign __doc`: man pages and shell completion,
 * all drawn from the command table (.usage, .optdocs, .example). */
#ifndef RS_CLI_DOC_H
#define RS_CLI_DOC_H

#include <stdio.h>

#include "cli/cli.h"

/* What an option's argument is, for completion. */
typedef enum doc_arg {
    DOC_ARG_NONE,  /* a flag, or an optional argument (--opt=VALUE only) */
    DOC_ARG_FILE,
    DOC_ARG_DIR,
    DOC_ARG_KEY,   /* a file or a pkcs11: URI */
    DOC_ARG_WORDS, /* one of the words in .arg, "a|b|c" */
    DOC_ARG_VALUE, /* free text: a number, a GUID, a time */
} doc_arg;

/* doc_args.c: an option's getopt entry (NULL if the table has none), what
 * its argument is, and whether it is optional (--opt=VALUE only). */
const struct option *doc_find_option(const rs_command *cmd, const char *name);
doc_arg doc_arg_kind(const rs_command *cmd, const rs_optdoc *o);
bool doc_arg_optional(const rs_command *cmd, const char *name);

/* The renderers: doc_man.c, doc_bash.c, doc_zsh.c. */
int doc_write_man_pages(const char *dir, const rs_command *const *commands, size_t n);
int doc_write_bash(FILE *f, const rs_command *const *commands, size_t n);
int doc_write_zsh(FILE *f, const rs_command *const *commands, size_t n);

#endif

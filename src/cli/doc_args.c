/* What an option takes, as every renderer behind `reprosign __doc` shows
 * it: read from the command's getopt table and its .optdocs, so that the
 * man pages, the completion scripts and `__doc check` agree. */
#include <string.h>

#include "cli/doc.h"

const struct option *doc_find_option(const rs_command *cmd, const char *name)
{
    for (const struct option *o = cmd->options; o && o->name; o++)
        if (!strcmp(o->name, name))
            return o;
    return NULL;
}

bool doc_arg_optional(const rs_command *cmd, const char *name)
{
    const struct option *o = doc_find_option(cmd, name);

    return o && o->has_arg == optional_argument;
}

static bool is_one_of(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list))
            return true;
    return false;
}

doc_arg doc_arg_kind(const rs_command *cmd, const rs_optdoc *o)
{
    static const char *const dirs[] = { "DIR", "SIGDIR", "ROOT", "OUTROOT", "OUTDIR", "LOGDIR", NULL };
    static const char *const values[] = { "N", "T", "GUID", "NAME", "SUFFIX", "URI", "file:PATH|env:VAR", NULL };

    if (!o->arg || doc_arg_optional(cmd, o->name))
        return DOC_ARG_NONE;
    if (is_one_of(o->arg, values))
        return DOC_ARG_VALUE;
    if (strchr(o->arg, '|'))
        return DOC_ARG_WORDS;
    if (is_one_of(o->arg, dirs))
        return DOC_ARG_DIR;
    if (!strcmp(o->name, "key") || !strcmp(o->name, "cert"))
        return DOC_ARG_KEY;
    return DOC_ARG_FILE;
}

/* reprosign __doc: the man pages and the shell completion scripts,
 * rendered from the command table at build time, so they cannot drift
 * from --help.
 *
 *   reprosign __doc man OUTDIR          writes reprosign.1 and reprosign-CMD.1
 *                                       (reprosign-service.json.5 and
 *                                       reprosign-log.5 are written by hand:
 *                                       docs/man/)
 *   reprosign __doc completion [FILE]   writes the bash completion script
 *   reprosign __doc zsh [FILE]          writes the zsh completion (_reprosign)
 *   reprosign __doc check               fails if a long option is not
 *                                       documented, or a document names none
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/doc.h"

/* ---- consistency ---- */

static bool documented(const rs_command *cmd, const char *name)
{
    for (const rs_optdoc *d = cmd->optdocs; d && d->name; d++)
        if (!strcmp(d->name, name))
            return true;
    return false;
}

static size_t check_command(const rs_command *cmd)
{
    size_t problems = 0;

    for (const struct option *o = cmd->options; o && o->name; o++)
        if (strcmp(o->name, "help") && !documented(cmd, o->name)) {
            printf("%s: --%s has no entry in .optdocs\n", cmd->name, o->name);
            problems++;
        }
    for (const rs_optdoc *d = cmd->optdocs; d && d->name; d++) {
        const struct option *o = doc_find_option(cmd, d->name);

        if (!o || !d->text || (d->arg != NULL) != (o->has_arg != 0)) {
            printf("%s: .optdocs --%s does not match the options table\n", cmd->name, d->name);
            problems++;
        }
    }
    for (const char *letter = cmd->short_options; letter && *letter; letter++) {
        const struct option *o = cmd->options;

        while (o && o->name && o->val != *letter)
            o++;
        if (!o || !o->name) {
            printf("%s: -%c in .short_options is no option's letter\n", cmd->name, *letter);
            problems++;
        }
    }
    if (!cmd->example) {
        printf("%s: no example\n", cmd->name);
        problems++;
    }
    for (const rs_command *const *s = cmd->subcommands; s && *s; s++)
        problems += check_command(*s);
    return problems;
}

static int check_all(const rs_command *const *commands, size_t n)
{
    size_t problems = 0;

    for (size_t i = 0; i < n; i++) {
        if (!commands[i]->options && !commands[i]->subcommands) {
            printf("%s: no options table\n", commands[i]->name);
            problems++;
        }
        problems += check_command(commands[i]);
    }
    return problems ? EXIT_FAIL : EXIT_OK;
}

/* ---- dispatch ---- */

typedef int (*script_writer)(FILE *f, const rs_command *const *commands, size_t n);

static int write_script(const char *path, script_writer write, const rs_command *const *commands, size_t n)
{
    FILE *f = path ? fopen(path, "w") : stdout;
    int rc;

    if (!f) {
        fprintf(stderr, "reprosign: %s: %s\n", path, strerror(errno));
        return EXIT_FAIL;
    }
    rc = write(f, commands, n);
    if ((path ? fclose(f) : fflush(f)) != 0 || rc != EXIT_OK) {
        fprintf(stderr, "reprosign: %s: cannot write\n", path ? path : "standard output");
        return EXIT_FAIL;
    }
    return EXIT_OK;
}

int cli_doc(const rs_command *const *commands, size_t n, int argc, char **argv)
{
    const char *what = argc >= 2 ? argv[1] : "";
    const char *path = argc == 3 ? argv[2] : NULL;

    if (argc == 3 && !strcmp(what, "man"))
        return doc_write_man_pages(argv[2], commands, n);
    if ((argc == 2 || argc == 3) && !strcmp(what, "completion"))
        return write_script(path, doc_write_bash, commands, n);
    if ((argc == 2 || argc == 3) && !strcmp(what, "zsh"))
        return write_script(path, doc_write_zsh, commands, n);
    if (argc == 2 && !strcmp(what, "check"))
        return check_all(commands, n);
    fprintf(stderr, "usage: reprosign __doc (man OUTDIR | completion [FILE] | zsh [FILE] | check)\n");
    return EXIT_USAGE;
}

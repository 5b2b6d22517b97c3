#include "cli/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_fail(const rs_error *err)
{
    fprintf(stderr, "reprosign: %s\n", err->msg);
    return EXIT_FAIL;
}

int cli_fail_file(rs_error *err, const char *file)
{
    rs_error_prefix(err, "%s", file);
    return cli_fail(err);
}

/* Prints TEXT indented, line by line. */
static void print_indented(const char *indent, const char *text)
{
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");

        printf("%s%.*s\n", indent, (int)n, p);
        p += n + (p[n] == '\n');
    }
}

static bool optional_arg(const rs_command *cmd, const char *name)
{
    for (const struct option *o = cmd->options; o && o->name; o++)
        if (!strcmp(o->name, name))
            return o->has_arg == optional_argument;
    return false;
}

char cli_short_option(const rs_command *cmd, const char *name)
{
    for (const struct option *o = cmd->options; o && o->name && cmd->short_options; o++)
        if (!strcmp(o->name, name) && o->val > 0 && strchr(cmd->short_options, o->val))
            return (char)o->val;
    return 0;
}

void cli_help(const rs_command *cmd)
{
    printf("usage: reprosign %s\n", cmd->usage);
    if (cmd->optdocs || cmd->options) {
        printf("\noptions:\n");
        for (const rs_optdoc *o = cmd->optdocs; o && o->name; o++) {
            char letter = cli_short_option(cmd, o->name), also[8] = "";

            if (letter)
                snprintf(also, sizeof(also), "-%c, ", letter);
            printf("  %s--%s%s%s%s\n", also, o->name, !o->arg ? "" : optional_arg(cmd, o->name) ? "[=" : " ",
                   o->arg ? o->arg : "", o->arg && optional_arg(cmd, o->name) ? "]" : "");
            print_indented("      ", o->text);
            if (o->dflt)
                printf("      (default: %s)\n", o->dflt);
        }
        printf("  -h, --help\n      Print this text and exit.\n");
    }
    if (cmd->example) {
        printf("\nexample:\n");
        print_indented("  ", cmd->example);
    }
}

int cli_usage(const rs_command *cmd, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "reprosign %s: ", cmd->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see 'reprosign %s --help')\n", cmd->name);
    return EXIT_USAGE;
}

/* shortopts, then each of the command's one-letter forms (with ':' for
 * one that takes a value). */
static const char *all_short_options(const rs_command *cmd, const char *shortopts, char *buf, size_t cap)
{
    size_t n = strlen(shortopts);

    if (!cmd->short_options || n >= cap)
        return shortopts;
    memcpy(buf, shortopts, n);
    for (const struct option *o = cmd->options; o && o->name; o++)
        if (o->val > 0 && strchr(cmd->short_options, o->val) && n + 3 < cap) {
            buf[n++] = (char)o->val;
            if (o->has_arg == required_argument)
                buf[n++] = ':';
        }
    buf[n] = '\0';
    return buf;
}

int cli_getopt(const rs_command *cmd, int argc, char **argv, const char *shortopts, const struct option *longopts)
{
    char buf[64];
    int c;

    opterr = 0;
    c = getopt_long(argc, argv, all_short_options(cmd, shortopts, buf, sizeof(buf)), longopts, NULL);
    if (c == 'h') {
        cli_help(cmd);
        return -2;
    }
    if (c == '?') {
        if (optopt)
            cli_usage(cmd, "option -%c is unknown or needs a value", optopt);
        else
            cli_usage(cmd, "unknown option or missing value: %s", argv[optind - 1]);
    }
    return c;
}

const struct option cli_one_signature_options[] = {
    { "output", required_argument, NULL, 'o' },
    { "index", required_argument, NULL, 'i' },
    { "help", no_argument, NULL, 'h' },
    { 0 },
};

int cli_parse_one_signature(const rs_command *cmd, int argc, char **argv, cli_one_signature_args *a)
{
    int c;

    while ((c = cli_getopt(cmd, argc, argv, "h", cli_one_signature_options)) != -1) {
        switch (c) {
        case 'o': a->output = optarg; break;
        case 'i':
            if (!cli_parse_index(optarg, &a->index))
                return cli_usage(cmd, "--index takes a number >= 0, not '%s'", optarg);
            break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc)
        return cli_usage(cmd, "expected exactly one FILE");
    a->file = argv[optind];
    return -1;
}

bool cli_parse_index(const char *s, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < 0)
        return false;
    *out = v;
    return true;
}

int cli_json_print(json_t *doc)
{
    int rc;

    if (!doc) {
        fprintf(stderr, "reprosign: cannot build JSON output\n");
        return EXIT_FAIL;
    }
    rc = json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    fputc('\n', stdout);
    return rc == 0 ? EXIT_OK : EXIT_FAIL;
}

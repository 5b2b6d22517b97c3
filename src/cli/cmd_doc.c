/* reprosign __doc: the man pages and the bash completion script, rendered
 * from the command table at build time. The usage text each command prints
 * for --help is the only description of it, so the three cannot disagree.
 *
 *   reprosign __doc man OUTDIR     writes reprosign.1 and reprosign-CMD.1
 *   reprosign __doc completion [FILE]  writes the bash completion script
 *   reprosign __doc check          fails if a long option is missing from
 *                                  its command's usage text
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#ifndef RS_VERSION
#define RS_VERSION "0"
#endif

/* ---- roff ---- */

/* Escapes one line of text for roff. A '-' starting a word (an option) is
 * a minus sign; inside a word (sign-template) it stays a hyphen. */
static void roff_line(FILE *f, const char *s, size_t len)
{
    if (len && (s[0] == '.' || s[0] == '\''))
        fputs("\\&", f);
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool word_start = i == 0 || s[i - 1] == ' ' || s[i - 1] == '-' || s[i - 1] == '[' || s[i - 1] == '(' ||
                          s[i - 1] == '|';

        if (c == '\\')
            fputs("\\e", f);
        else if (c == '-' && word_start)
            fputs("\\-", f);
        else
            fputc(c, f);
    }
    fputc('\n', f);
}

/* Length of the paragraph starting at s (up to a blank line or the end). */
static size_t paragraph_len(const char *s)
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
static void roff_paragraph(FILE *f, const char *s, size_t len, bool keep_lines)
{
    keep_lines |= has_indented_line(s, len);
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

/* The usage text: a synopsis paragraph, then the description. */
static const char *usage_body(const rs_command *cmd)
{
    const char *p = cmd->usage + paragraph_len(cmd->usage);

    while (*p == '\n')
        p++;
    return p;
}

static void roff_synopsis(FILE *f, const rs_command *cmd)
{
    fputs(".nf\n\\fBreprosign\\fR ", f);
    roff_line(f, cmd->usage, paragraph_len(cmd->usage));
    fputs(".fi\n", f);
}

static void roff_description(FILE *f, const char *s)
{
    while (*s) {
        size_t n = paragraph_len(s);

        roff_paragraph(f, s, n, false);
        s += n;
        while (*s == '\n')
            s++;
    }
}

/* ---- options ---- */

/* The argument name an option takes in the synopsis ("--output OUT"). */
static void option_metavar(const rs_command *cmd, const char *name, char *out, size_t cap)
{
    char needle[64];
    const char *p;
    size_t n = 0;

    out[0] = '\0';
    snprintf(needle, sizeof(needle), "--%s ", name);
    p = strstr(cmd->usage, needle);
    if (!p)
        return;
    p += strlen(needle);
    while (p[n] && p[n] != ' ' && p[n] != ']' && p[n] != ')' && p[n] != '\n' && n + 1 < cap)
        n++;
    memcpy(out, p, n);
    out[n] = '\0';
}

static void roff_options(FILE *f, const rs_command *cmd)
{
    fputs(".SH OPTIONS\n", f);
    for (const struct option *o = cmd->options; o && o->name; o++) {
        char metavar[64];

        if (!strcmp(o->name, "help"))
            continue;
        option_metavar(cmd, o->name, metavar, sizeof(metavar));
        if (o->has_arg != no_argument && !metavar[0])
            snprintf(metavar, sizeof(metavar), "VALUE");
        fprintf(f, ".TP\n\\fB\\-\\-%s\\fR", o->name);
        if (o->has_arg != no_argument)
            fprintf(f, " \\fI%s\\fR", metavar);
        fputs("\nSee DESCRIPTION.\n", f);
    }
    fputs(".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nPrint the usage text and exit.\n", f);
}

/* ---- man pages ---- */

static void page_name(const rs_command *cmd, char *out, size_t cap)
{
    snprintf(out, cap, "reprosign-%s", cmd->name);
    for (char *p = out; *p; p++)
        if (*p == ' ')
            *p = '-';
}

static void roff_header(FILE *f, const char *name, const char *summary)
{
    char upper[128];
    size_t i;

    for (i = 0; name[i] && i + 1 < sizeof(upper); i++)
        upper[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
    upper[i] = '\0';
    fprintf(f, ".TH %s 1 \"\" \"reprosign %s\" \"reprosign manual\"\n.SH NAME\n", upper, RS_VERSION);
    fprintf(f, "%s \\- ", name);
    roff_line(f, summary, strlen(summary));
}

static void roff_footer(FILE *f)
{
    fputs(".SH EXIT STATUS\n0 on success, 1 on failure (one line on standard error,\n"
          "\\fBreprosign: FILE: reason\\fR, and no output left behind), 2 on a usage error.\n"
          ".SH SEE ALSO\n\\fBreprosign\\fR(1)\n",
          f);
}

static void roff_subcommand(FILE *f, const rs_command *sub)
{
    fputs(".SS ", f);
    roff_line(f, sub->name, strlen(sub->name));
    roff_synopsis(f, sub);
    roff_description(f, usage_body(sub));
    if (sub->options) {
        fputs(".PP\nOptions:", f);
        for (const struct option *o = sub->options; o->name; o++)
            fprintf(f, " \\fB\\-\\-%s\\fR", o->name);
        fputc('\n', f);
    }
}

static void write_command_page(FILE *f, const rs_command *cmd)
{
    char name[128];

    page_name(cmd, name, sizeof(name));
    roff_header(f, name, cmd->summary ? cmd->summary : "");
    fputs(".SH SYNOPSIS\n", f);
    roff_synopsis(f, cmd);
    fputs(".SH DESCRIPTION\n", f);
    roff_description(f, usage_body(cmd));
    if (cmd->subcommands) {
        fputs(".SH SUBCOMMANDS\n", f);
        for (const rs_command *const *s = cmd->subcommands; *s; s++)
            roff_subcommand(f, *s);
    }
    if (cmd->options)
        roff_options(f, cmd);
    roff_footer(f);
}

static void write_main_page(FILE *f, const rs_command *const *commands, size_t n)
{
    roff_header(f, "reprosign", "Secure Boot code signing for Debian: EFI images and kernel modules");
    fputs(".SH SYNOPSIS\n\\fBreprosign\\fR \\fICOMMAND\\fR [\\fIARGS\\fR]\n.br\n"
          "\\fBreprosign\\fR \\fICOMMAND\\fR \\fB\\-\\-help\\fR\n"
          ".SH DESCRIPTION\nSigns, attaches, detaches, strips, lists and verifies Secure Boot signatures\n"
          "on PE/COFF EFI images and Linux kernel modules, runs Debian's two-stage signing\n"
          "flow (signing templates in, detached signatures and the \\-signed source package\n"
          "out), and checks UEFI trust along a boot chain. The format of every input is\n"
          "detected from its bytes. Every \\fB\\-\\-key\\fR and \\fB\\-\\-cert\\fR takes a file (PEM or DER)\n"
          "or a \\fBpkcs11:\\fR URI.\n.SH COMMANDS\n",
          f);
    for (size_t i = 0; i < n; i++) {
        char name[128];

        page_name(commands[i], name, sizeof(name));
        fprintf(f, ".TP\n\\fB%s\\fR\n", commands[i]->name);
        if (commands[i]->summary)
            roff_line(f, commands[i]->summary, strlen(commands[i]->summary));
        fprintf(f, "See \\fB%s\\fR(1).\n", name);
    }
    fputs(".SH ENVIRONMENT\n.TP\n\\fBSOURCE_DATE_EPOCH\\fR\nThe signing time and the mtime of generated "
          "archives, so the same inputs give the same bytes.\n",
          f);
    roff_footer(f);
}

static int write_page(const char *dir, const char *name, const rs_command *cmd, const rs_command *const *commands,
                      size_t n)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s.1", dir, name);
    f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "reprosign: %s: %s\n", path, strerror(errno));
        return EXIT_FAIL;
    }
    if (cmd)
        write_command_page(f, cmd);
    else
        write_main_page(f, commands, n);
    if (fclose(f) != 0) {
        fprintf(stderr, "reprosign: %s: %s\n", path, strerror(errno));
        return EXIT_FAIL;
    }
    return EXIT_OK;
}

static int write_man_pages(const char *dir, const rs_command *const *commands, size_t n)
{
    if (write_page(dir, "reprosign", NULL, commands, n) != EXIT_OK)
        return EXIT_FAIL;
    for (size_t i = 0; i < n; i++) {
        char name[128];

        page_name(commands[i], name, sizeof(name));
        if (write_page(dir, name, commands[i], commands, n) != EXIT_OK)
            return EXIT_FAIL;
    }
    return EXIT_OK;
}

/* ---- bash completion ---- */

/* A command without an options table: its long options, read from the
 * usage text. */
static bool seen_before(const char *usage, const char *p, size_t n)
{
    for (const char *q = strstr(usage, "--"); q && q < p; q = strstr(q + 2, "--"))
        if (!strncmp(q + 2, p + 2, n) && strspn(q + 2, "abcdefghijklmnopqrstuvwxyz0123456789-") == n)
            return true;
    return false;
}

static void usage_options(const rs_command *cmd, FILE *f)
{
    for (const char *p = strstr(cmd->usage, "--"); p; p = strstr(p + 2, "--")) {
        size_t n = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz0123456789-");

        if (n && (p == cmd->usage || p[-1] != '-') && !seen_before(cmd->usage, p, n) && strncmp(p + 2, "help", n))
            fprintf(f, "--%.*s ", (int)n, p + 2);
    }
    fputs("--help", f);
}

static void completion_options(FILE *f, const rs_command *cmd)
{
    fprintf(f, "        '%s') opts='", cmd->name);
    if (cmd->options)
        for (const struct option *o = cmd->options; o->name; o++)
            fprintf(f, "%s--%s", o == cmd->options ? "" : " ", o->name);
    else
        usage_options(cmd, f);
    fputs("' ;;\n", f);
}

/* Options whose next word is a value, not a file. */
static void completion_valued(FILE *f)
{
    fputs("    case $prev in\n"
          "        --hash) COMPREPLY=($(compgen -W 'sha256 sha384 sha512' -- \"$cur\")); return ;;\n"
          "        --name) COMPREPLY=($(compgen -W 'PK KEK db dbx' -- \"$cur\")); return ;;\n"
          "        --jobs|--index|--timestamp|--owner|--suffix) return ;;\n"
          "    esac\n",
          f);
}

static void completion_cases(FILE *f, const rs_command *cmd)
{
    completion_options(f, cmd);
    for (const rs_command *const *s = cmd->subcommands; s && *s; s++)
        completion_options(f, *s);
}

static void subcommand_words(FILE *f, const rs_command *cmd)
{
    size_t prefix = strlen(cmd->name) + 1;

    fprintf(f, "        %s) words_sub='", cmd->name);
    for (const rs_command *const *s = cmd->subcommands; *s; s++)
        fprintf(f, "%s%s", s == cmd->subcommands ? "" : " ", (*s)->name + prefix);
    fputs("' ;;\n", f);
}

static int write_completion(FILE *f, const rs_command *const *commands, size_t n)
{
    fputs("# bash completion for reprosign(1).\n"
          "# Generated by 'reprosign __doc completion' from the command table: do not edit.\n"
          "_reprosign()\n{\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    local cmd=${COMP_WORDS[1]:-} key words_sub='' opts=''\n"
          "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
          "        COMPREPLY=($(compgen -W '--help --version",
          f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, " %s", commands[i]->name);
    fputs("' -- \"$cur\"))\n        return\n    fi\n    case $cmd in\n", f);
    for (size_t i = 0; i < n; i++)
        if (commands[i]->subcommands)
            subcommand_words(f, commands[i]);
    fputs("    esac\n    key=$cmd\n"
          "    if [ -n \"$words_sub\" ]; then\n"
          "        if [ \"$COMP_CWORD\" -eq 2 ]; then\n"
          "            COMPREPLY=($(compgen -W \"$words_sub --help\" -- \"$cur\"))\n"
          "            return\n"
          "        fi\n"
          "        key=\"$cmd ${COMP_WORDS[2]}\"\n"
          "    fi\n",
          f);
    completion_valued(f);
    fputs("    case $key in\n", f);
    for (size_t i = 0; i < n; i++)
        completion_cases(f, commands[i]);
    fputs("    esac\n"
          "    if [[ $cur == -* ]]; then\n"
          "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
          "        return\n"
          "    fi\n"
          "    compopt -o filenames 2>/dev/null\n"
          "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
          "}\n"
          "complete -F _reprosign reprosign\n",
          f);
    return fflush(f) == 0 ? EXIT_OK : EXIT_FAIL;
}

static int write_completion_file(const char *path, const rs_command *const *commands, size_t n)
{
    FILE *f = fopen(path, "w");
    int rc;

    if (!f) {
        fprintf(stderr, "reprosign: %s: %s\n", path, strerror(errno));
        return EXIT_FAIL;
    }
    rc = write_completion(f, commands, n);
    if (fclose(f) != 0 || rc != EXIT_OK) {
        fprintf(stderr, "reprosign: %s: cannot write\n", path);
        return EXIT_FAIL;
    }
    return EXIT_OK;
}

/* ---- consistency ---- */

static bool usage_mentions(const rs_command *cmd, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = strstr(cmd->usage, "--"); p; p = strstr(p + 2, "--"))
        if (!strncmp(p + 2, name, n) && !strchr("abcdefghijklmnopqrstuvwxyz0123456789-", p[2 + n]))
            return true;
    return false;
}

static size_t check_command(const rs_command *cmd)
{
    size_t missing = 0;

    for (const struct option *o = cmd->options; o && o->name; o++)
        if (strcmp(o->name, "help") && !usage_mentions(cmd, o->name)) {
            printf("%s: --%s is not in the usage text\n", cmd->name, o->name);
            missing++;
        }
    for (const rs_command *const *s = cmd->subcommands; s && *s; s++)
        missing += check_command(*s);
    return missing;
}

static int check_all(const rs_command *const *commands, size_t n)
{
    size_t missing = 0;

    for (size_t i = 0; i < n; i++) {
        if (!commands[i]->options && !commands[i]->subcommands)
            printf("%s: no options table (completion reads the usage text)\n", commands[i]->name);
        missing += check_command(commands[i]);
    }
    return missing ? EXIT_FAIL : EXIT_OK;
}

int cli_doc(const rs_command *const *commands, size_t n, int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "man"))
        return write_man_pages(argv[2], commands, n);
    if (argc == 3 && !strcmp(argv[1], "completion"))
        return write_completion_file(argv[2], commands, n);
    if (argc == 2 && !strcmp(argv[1], "completion"))
        return write_completion(stdout, commands, n);
    if (argc == 2 && !strcmp(argv[1], "check"))
        return check_all(commands, n);
    fprintf(stderr, "usage: reprosign __doc (man OUTDIR | completion [FILE] | check)\n");
    return EXIT_USAGE;
}

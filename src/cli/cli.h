/* Shared by the subcommands: exit codes, error reporting, option help. */
#ifndef RS_CLI_H
#define RS_CLI_H

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/cleanup.h"
#include "base/error.h"

/* EXIT_REFUSED: `service run --once` refused some requests (EXIT_FAIL: some
 * failed for now, and will be tried again). */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_REFUSED = 3 };

/* One long option as --help and the man pages describe it. */
typedef struct rs_optdoc {
    const char *name; /* without "--" */
    const char *arg;  /* what it takes ("FILE", "sha256|sha384|sha512"), NULL for a flag */
    const char *text; /* what it does, one to three lines */
    const char *dflt; /* its default, NULL if it has none */
} rs_optdoc;

typedef struct rs_command {
    const char *name;
    const char *summary;
    const char *usage;       /* full --help text after "usage: reprosign " */
    int (*run)(int argc, char **argv);
    /* Optional, for the man pages and shell completion (cmd_doc.c): the
     * getopt table, and a NULL-terminated list of subcommands. */
    const struct option *options;
    const struct rs_command *const *subcommands;
    /* Every long option but --help, in the order --help lists them;
     * ended by { 0 }. Checked against .options by `__doc check`. */
    const rs_optdoc *optdocs;
    const char *example;
    /* Subcommand words a command parses itself ("init run status"). */
    const char *verbs;
    /* The one-letter forms long options also have, by their getopt val
     * ("q": -q is --quiet); cli_getopt accepts them, the docs show them. */
    const char *short_options;
} rs_command;

/* What --help says of the progress of a command that handles many files. */
#define CLI_PROGRESS_TEXT                                                                    \
    "On a terminal, standard error shows the files hashed and the signatures done, out\n"    \
    "of the total, the throughput over the bytes hashed and the time left, redrawn in\n"    \
    "place; otherwise a line every 5 seconds at most. A run that succeeds ends with one\n" \
    "line: files, bytes hashed, time taken and signatures. --quiet prints none of this."

/* Prints "reprosign: <message>" to stderr and returns EXIT_FAIL. */
int cli_fail(const rs_error *err);
/* The same, with "<file>: " in front of the message. */
int cli_fail_file(rs_error *err, const char *file);
/* Prints a usage error with the command's synopsis; returns EXIT_USAGE. */
int cli_usage(const rs_command *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_help(const rs_command *cmd);
/* The letter of a long option's one-letter form, or 0 if it has none. */
char cli_short_option(const rs_command *cmd, const char *name);
/* getopt_long with --help handled, and the command's .short_options too; returns the option, or -2 after --help
 * was printed, or '?' after a usage error was printed. */
int cli_getopt(const rs_command *cmd, int argc, char **argv, const char *shortopts, const struct option *longopts);
/* Prints a JSON document (taking the reference) to stdout. */
int cli_json_print(json_t *doc);
/* Parses a non-negative integer option value. */
bool cli_parse_index(const char *s, long *out);
/* What `detach` and `strip` take: one FILE, --output and --index. */
typedef struct cli_one_signature_args {
    const char *file;
    const char *output;   /* NULL unless given */
    long index;           /* left as the caller set it unless given */
} cli_one_signature_args;
extern const struct option cli_one_signature_options[];
/* Parses those; returns -1 to go on, or the exit status (after --help, or
 * a usage error it printed). */
int cli_parse_one_signature(const rs_command *cmd, int argc, char **argv, cli_one_signature_args *a);
/* The hidden "__doc" command: renders man pages and bash completion from
 * the command table, so they cannot drift from --help. */
int cli_doc(const rs_command *const *commands, size_t n, int argc, char **argv);

extern const rs_command cmd_sign, cmd_attach, cmd_detach, cmd_strip, cmd_verify, cmd_list, cmd_digest, cmd_token;
extern const rs_command cmd_sign_template, cmd_attach_tree, cmd_sign_blob;
extern const rs_command cmd_efi, cmd_chain, cmd_sbat;
extern const rs_command cmd_service, cmd_log, cmd_attestation;

#endif

/* reprosign: git-style dispatch to one file per subcommand. */
#include <stdio.h>
#include <string.h>

#include "base/file.h"
#include "cli/cli.h"

static const rs_command *const commands[] = {
    &cmd_sign, &cmd_sign_blob, &cmd_attach, &cmd_detach, &cmd_strip, &cmd_verify, &cmd_list, &cmd_digest,
    &cmd_sign_template, &cmd_attach_tree, &cmd_token,
    &cmd_efi, &cmd_chain, &cmd_sbat,
    &cmd_service, &cmd_log, &cmd_attestation,
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
    fprintf(f, "usage: reprosign COMMAND [ARGS]\n\n"
               "Sign, attach, detach, strip, list and verify Secure Boot signatures on\n"
               "PE/COFF EFI images and Linux kernel modules.\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-14s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(f, "\n'reprosign help COMMAND' (or 'reprosign COMMAND --help') describes one command.\n"
               "Exit status: 0 success, 1 failure, 2 usage error; 'service run --once' also\n"
               "3: a request was refused.\n");
}

/* NAME's subcommand SUB ("efi" "keygen" is "efi keygen"), or NAME itself. */
static const rs_command *find_command(const char *name, const char *sub)
{
    for (size_t i = 0; i < NCOMMANDS; i++) {
        size_t n = strlen(name);

        if (strcmp(name, commands[i]->name))
            continue;
        if (!sub)
            return commands[i];
        for (const rs_command *const *s = commands[i]->subcommands; s && *s; s++)
            if (!strncmp((*s)->name, name, n) && (*s)->name[n] == ' ' && !strcmp((*s)->name + n + 1, sub))
                return *s;
    }
    return NULL;
}

/* `reprosign help COMMAND [SUBCOMMAND]`: the same text as `COMMAND
 * [SUBCOMMAND] --help`. */
static int help(const char *name, const char *sub)
{
    const rs_command *cmd = find_command(name, sub);

    if (cmd) {
        cli_help(cmd);
        return EXIT_OK;
    }
    fprintf(stderr, "reprosign: help: unknown command '%s%s%s' (see 'reprosign --help')\n", name, sub ? " " : "",
            sub ? sub : "");
    return EXIT_USAGE;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "help") && (argc == 3 || argc == 4))
        return help(argv[2], argc == 4 ? argv[3] : NULL);
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("reprosign %s\n", RS_VERSION);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "__doc"))
        return cli_doc(commands, NCOMMANDS, argc - 1, argv + 1);
    rs_output_track_signals();
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(argv[1], commands[i]->name))
            return commands[i]->run(argc - 1, argv + 1);
    fprintf(stderr, "reprosign: unknown command '%s' (see 'reprosign --help')\n", argv[1]);
    return EXIT_USAGE;
}

#include <stdio.h>

#include "cli/cli.h"
#include "uefi/sbat.h"

static int run(int argc, char **argv);

const rs_command cmd_sbat = {
    .name = "sbat",
    .summary = "print an EFI image's SBAT metadata (.sbat section)",
    .usage = "sbat FILE [--level]\n\n"
             "Prints the .sbat CSV of an EFI image. --level prints shim's .sbatlevel\n"
             "instead (the previous and latest revocation levels it carries).",
    .run = run,
};

static int run(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "level", no_argument, NULL, 'l' },
        { "help", no_argument, NULL, 'h' },
        { 0 },
    };
    _cleanup_(sbat_image_free) sbat_image s = { 0 };
    bool level = false;
    rs_error err;
    int c;

    while ((c = cli_getopt(&cmd_sbat, argc, argv, "lh", longopts)) != -1) {
        switch (c) {
        case 'l': level = true; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc)
        return cli_usage(&cmd_sbat, "expected exactly one FILE");
    if (sbat_image_load(argv[optind], &s, &err) < 0)
        return cli_fail(&err);
    if (!level) {
        if (!s.sbat) {
            rs_fail(&err, "%s: no .sbat section", argv[optind]);
            return cli_fail(&err);
        }
        fputs(s.sbat, stdout);
        return EXIT_OK;
    }
    if (!s.previous) {
        rs_fail(&err, "%s: no .sbatlevel section", argv[optind]);
        return cli_fail(&err);
    }
    printf("previous:\n%slatest:\n%s", s.previous, s.latest);
    return EXIT_OK;
}

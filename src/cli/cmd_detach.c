#include "cli/cli.h"
#include "ops/ops.h"

static int run(int argc, char **argv);

static const struct option longopts[] = {
    { "output", required_argument, NULL, 'o' },
    { "index", required_argument, NULL, 'i' },
    { "help", no_argument, NULL, 'h' },
    { 0 },
};

static const rs_optdoc detach_docs[] = {
    { "output", "SIG",
      "Where the DER signature goes.",
      "standard output (refused on a terminal)" },
    { "index", "N",
      "Which signature, counted from 0.",
      "0" },
    { 0 },
};

const rs_command cmd_detach = {
    .name = "detach",
    .summary = "write a file's signature out as a detached DER signature",
    .usage = "detach FILE [--output SIG] [--index N]\n\n"
             "Writes signature N (default 0, the first) of FILE, as DER, to SIG, or to\n"
             "standard output without --output (not to a terminal). FILE is not changed.",
    .run = run,
    .optdocs = detach_docs,
    .example = "reprosign detach grubx64.efi.signed > grubx64.efi.sig",
    .options = longopts,
};

static int run(int argc, char **argv)
{
    const char *output = NULL;
    long index = 0;
    rs_error err;
    int c;

    while ((c = cli_getopt(&cmd_detach, argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'i':
            if (!cli_parse_index(optarg, &index))
                return cli_usage(&cmd_detach, "--index takes a number >= 0, not '%s'", optarg);
            break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc)
        return cli_usage(&cmd_detach, "expected exactly one FILE");
    if (rs_op_detach(argv[optind], (size_t)index, output, &err) < 0)
        return cli_fail(&err);
    return EXIT_OK;
}

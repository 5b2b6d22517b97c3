#include "cli/cli.h"
#include "ops/ops.h"

static int run(int argc, char **argv);

static const struct option longopts[] = {
    { "output", required_argument, NULL, 'o' },
    { "index", required_argument, NULL, 'i' },
    { "help", no_argument, NULL, 'h' },
    { 0 },
};

static const rs_optdoc strip_docs[] = {
    { "output", "OUT",
      "Write the stripped file to OUT instead of changing FILE.",
      "FILE, in place" },
    { "index", "N",
      "Remove only signature N, counted from 0.",
      "every signature" },
    { 0 },
};

const rs_command cmd_strip = {
    .name = "strip",
    .summary = "remove signatures",
    .usage = "strip FILE [--output OUT] [--index N]\n\n"
             "Removes every signature from FILE (in place unless --output is given), or\n"
             "only signature N. For an EFI image the result is the image data padded to\n"
             "8 bytes with a recomputed checksum, as 'sbattach --remove' writes it: an\n"
             "image that was 8-byte aligned with a valid checksum before signing comes\n"
             "back byte for byte. In place, a FILE that is a symlink has the file it leads\n"
             "to rewritten.",
    .run = run,
    .optdocs = strip_docs,
    .example = "reprosign strip shimx64.efi.signed --output shimx64.efi",
    .options = longopts,
};

static int run(int argc, char **argv)
{
    const char *output = NULL;
    long index = -1;
    rs_error err;
    int c;

    while ((c = cli_getopt(&cmd_strip, argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'i':
            if (!cli_parse_index(optarg, &index))
                return cli_usage(&cmd_strip, "--index takes a number >= 0, not '%s'", optarg);
            break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc)
        return cli_usage(&cmd_strip, "expected exactly one FILE");
    if (rs_op_strip(argv[optind], index, output, &err) < 0)
        return cli_fail(&err);
    return EXIT_OK;
}

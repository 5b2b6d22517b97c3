#include "cli/cli.h"
#include "ops/ops.h"

static int run(int argc, char **argv);

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
    .options = cli_one_signature_options,
};

static int run(int argc, char **argv)
{
    cli_one_signature_args a = { .index = -1 };
    int rc = cli_parse_one_signature(&cmd_strip, argc, argv, &a);
    rs_error err;

    if (rc >= 0)
        return rc;
    if (rs_op_strip(a.file, a.index, a.output, &err) < 0)
        return cli_fail(&err);
    return EXIT_OK;
}

#include "cli/cli.h"
#include "ops/ops.h"

static int run(int argc, char **argv);

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
    .options = cli_one_signature_options,
};

static int run(int argc, char **argv)
{
    cli_one_signature_args a = { .index = 0 };
    int rc = cli_parse_one_signature(&cmd_detach, argc, argv, &a);
    rs_error err;

    if (rc >= 0)
        return rc;
    if (rs_op_detach(a.file, (size_t)a.index, a.output, &err) < 0)
        return cli_fail(&err);
    return EXIT_OK;
}

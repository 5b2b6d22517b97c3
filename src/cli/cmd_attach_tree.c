#include <stdio.h>

#include "cli/cli.h"
#include "crypto/ossl.h"
#include "crypto/signer.h"
#include "pipeline/attach_tree.h"
#include "pipeline/batch.h"

static int run(int argc, char **argv);

static const struct option longopts[] = {
    { "signatures", required_argument, NULL, 's' },
    { "root", required_argument, NULL, 'r' },
    { "output", required_argument, NULL, 'o' },
    { "suffix", required_argument, NULL, 'S' },
    { "cert", required_argument, NULL, 'c' },
    { "jobs", required_argument, NULL, 'j' },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { 0 },
};

static const rs_optdoc attach_tree_docs[] = {
    { "signatures", "SIGDIR",
      "The tree of detached signatures, SIGDIR/<path>.sig (required).",
      NULL },
    { "root", "ROOT",
      "The tree of unsigned files (required).",
      NULL },
    { "output", "OUTROOT",
      "Write the signed files under OUTROOT instead of in place.",
      "in place under ROOT" },
    { "suffix", "SUFFIX",
      "Appended to each written file's name.",
      "none" },
    { "cert", "CERT",
      "The signer's certificate, to check kernel module signatures (required for them).",
      NULL },
    { "jobs", "N",
      "Files attached in parallel (1 to 1024).",
      "one per core" },
    { "quiet", NULL,
      "Print neither progress nor the summary line on standard error.",
      NULL },
    { 0 },
};

const rs_command cmd_attach_tree = {
    .name = "attach-tree",
    .summary = "attach a tree of detached signatures (the second stage)",
    .usage = "attach-tree --signatures SIGDIR --root ROOT [--output OUTROOT] [--suffix SUFFIX]\n"
             "                      [--cert CERT] [--jobs N] [--quiet]\n\n"
             "For every SIGDIR/<path>.sig, attaches it to ROOT/<path> and writes\n"
             "OUTROOT/<path><SUFFIX> (or ROOT/<path><SUFFIX> in place). Every signature is\n"
             "checked against its file's own digest first; if any does not fit, each such\n"
             "file is reported and nothing is written. Kernel module signatures carry no\n"
             "certificate: --cert names the signer's so they can be checked. A file that\n"
             "already carries its signature is left as it is, so running again finishes\n"
             "an interrupted run. In place, a symlink's file is rewritten and the link kept.\n\n"
             CLI_PROGRESS_TEXT,
    .run = run,
    .optdocs = attach_tree_docs,
    .example = "reprosign attach-tree --signatures out/signatures/linux-image-6.1.0-amd64 --root pkg/\n"
               "    --cert modules.crt --output signed/",
    .options = longopts,
    .short_options = "q",
};

static int run(int argc, char **argv)
{
    rs_attach_tree_options o = { 0 };
    rs_progress progress;
    bool quiet = false;
    _cleanup_(rs_attach_tree_report_free) rs_attach_tree_report report = { 0 };
    _cleanup_(rs_x509p) X509 *cert = NULL;
    rs_error err;
    long jobs;
    int c, rc;

    while ((c = cli_getopt(&cmd_attach_tree, argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case 's': o.signatures = optarg; break;
        case 'r': o.root = optarg; break;
        case 'o': o.output = optarg; break;
        case 'S': o.suffix = optarg; break;
        case 'c':
            if (rs_cert_open(optarg, &cert, &err) < 0)
                return cli_fail(&err);
            break;
        case 'j':
            if (!cli_parse_index(optarg, &jobs) || jobs < 1 || jobs > 1024)
                return cli_usage(&cmd_attach_tree, "--jobs takes a number from 1 to 1024");
            o.jobs = (unsigned)jobs;
            break;
        case 'q': quiet = true; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind != argc)
        return cli_usage(&cmd_attach_tree, "unexpected argument '%s'", argv[optind]);
    if (!o.signatures || !o.root)
        return cli_usage(&cmd_attach_tree, "--signatures and --root are required");
    o.cert = cert;
    rs_progress_init(&progress, cmd_attach_tree.name, "attached", rs_progress_mode_for_stderr(quiet));
    o.progress = &progress;
    rs_cancel_on_signals();
    rc = rs_attach_tree(&o, &report, &err);
    rs_progress_finish(&progress, rc == 0);
    for (size_t i = 0; i < report.n_problems; i++)
        fprintf(stderr, "reprosign: %s\n", report.problems[i]);
    if (rc < 0 && rs_cancelled())
        rs_reraise();
    if (rc < 0 && report.needs_cert)
        return cli_usage(&cmd_attach_tree, "%s", err.msg);
    return rc < 0 ? cli_fail(&err) : EXIT_OK;
}

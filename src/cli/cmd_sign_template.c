#include <stdio.h>
#include <stdlib.h>

#include "attest/rebuild_policy.h"
#include "cli/cli.h"
#include "cli/signer_args.h"
#include "ops/ops.h"
#include "pipeline/batch.h"
#include "pipeline/files_json.h"
#include "pipeline/sign_template.h"

static int run(int argc, char **argv);

static const struct option longopts[] = {
    { "packages", required_argument, NULL, 'p' },
    { "key", required_argument, NULL, 'k' }, { "pass", required_argument, NULL, 'W' },
    { "cert", required_argument, NULL, 'c' },
    { "via", required_argument, NULL, 'V' },
    { "module-key", required_argument, NULL, 'N' },
    { "module-cert", required_argument, NULL, 'M' },
    { "output", required_argument, NULL, 'o' },
    { "trusted-cert-allowlist", required_argument, NULL, 'a' },
    { "jobs", required_argument, NULL, 'j' },
    { "hash", required_argument, NULL, 'H' },
    { "no-signing-time", no_argument, NULL, 'T' },
    { "rebuilder", required_argument, NULL, 'R' },
    { "attestations", required_argument, NULL, 'A' },
    { "require-rebuilds", required_argument, NULL, 'K' },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { 0 },
};

static const rs_optdoc sign_template_docs[] = {
    { "packages", "DIR",
      "The unsigned binary packages: .deb files or unpacked roots named after their package.",
      NULL },
    CLI_KEY_DOCS,
    { "cert", "CERT",
      "The signer's certificate (with --via: of a key the service holds).",
      NULL },
    { "via", "SOCKET",
      "Have the signing service at SOCKET sign instead of a local key;\n"
      "only the request goes over the socket.",
      NULL },
    { "module-key", "KEY",
      "The key for linux-module files (without --via), so each sig_type has its own,\n"
      "as the signing service requires.",
      "--key" },
    { "module-cert", "CERT",
      "The certificate for linux-module files: with --via, of the service's module key.",
      "--cert" },
    { "output", "OUTDIR",
      "Where the signatures and the -signed source go; must not exist.",
      NULL },
    { "trusted-cert-allowlist", "FILE",
      "SHA-256 fingerprints, one per line, that templates' trusted_certs may name.",
      "none may" },
    { "jobs", "N",
      "Files signed in parallel (1 to 1024).",
      "one per core; with --via four per core, at most 64" },
    { "hash", "sha256|sha384|sha512",
      "The digest algorithm.",
      "sha256" },
    { "no-signing-time", NULL,
      "Leave the signingTime attribute out.",
      "signingTime from SOURCE_DATE_EPOCH, else the clock" },
    { "rebuilder", "NAME=KEYFILE",
      "A rebuilder whose attestations count, and one of its public keys (in-toto's JSON\n"
      "or PEM); may repeat, also for more keys of one rebuilder.", NULL },
    { "attestations", "DIR",
      "Where the rebuilders' attestations are: DIR/NAME/PACKAGE_VERSION_ARCH.deb.*\n"
      "(docs/rebuilds.md).", NULL },
    { "require-rebuilds", "K",
      "Sign only once K of the rebuilders attest each unsigned .deb's exact bytes.",
      "no rebuilds required" },
    { "quiet", NULL,
      "Print neither progress nor the summary line on standard error.",
      NULL },
    { 0 },
};

const rs_command cmd_sign_template = {
    .name = "sign-template",
    .summary = "sign what a Debian signing template lists; make the -signed source package",
    .usage = "sign-template TEMPLATE --packages DIR (--key KEY [--pass SPEC] | --via SOCKET) --cert CERT\n"
             "                      --output OUTDIR [--trusted-cert-allowlist FILE] [--jobs N]\n"
             "                      [--module-key KEY] [--module-cert CERT] [--hash ALG]\n"
             "                      [--no-signing-time] [--quiet]\n"
             "                      [--rebuilder NAME=KEYFILE... --attestations DIR --require-rebuilds K]\n\n"
             "TEMPLATE is a template .deb, an unpacked template, or a files.json. DIR holds the\n"
             "unsigned binary packages as .deb files (read in place) or unpacked roots named\n"
             "after their package. Every listed file is checked before anything is signed.\n"
             "OUTDIR (which must not exist) receives signatures/<pkg>/<path>.sig,\n"
             "signatures.tar.gz, manifest.json and, when the template has a source-template/,\n"
             "the <source>-<version>/ tree with its .dsc and .tar.xz (dpkg-source -b).\n"
             "The allowlist lists the SHA-256 fingerprints (one per line) that templates'\n"
             "trusted_certs may name; by default none may.\n\n"
             "--via has the signing service's socket sign instead of a local key: CERT is the\n"
             "certificate of a key the service holds, and the service gets only each file's\n"
             "digest and name (for its log). The signatures are the same bytes a local key\n"
             "gives. --jobs then defaults to four per core (at most 64), so the service\n"
             "always has requests waiting.\n\n"
             "--require-rebuilds signs nothing until K of the --rebuilder keys (counted by key,\n"
             "not by name) have attested each unsigned .deb's SHA-256 under its pool file name\n"
             "(in-toto links or DSSE statements, read from --attestations); a rebuilder that\n"
             "attests another digest is a refusal (docs/rebuilds.md).\n\n"
             "--module-cert (and, without --via, --module-key) give linux-module files a key\n"
             "of their own, as the signing service does: one key, one purpose. Without them,\n"
             "--key and --cert sign every file.\n\n"
             CLI_PROGRESS_TEXT,
    .run = run,
    .optdocs = sign_template_docs,
    .example = "reprosign sign-template shim-signed-template.deb --packages debs/ --key db.key\n"
               "    --cert db.crt --output out/",
    .options = longopts,
    .short_options = "q",
};

static bool parse_jobs(const char *s, unsigned *out)
{
    long v;

    if (!cli_parse_index(s, &v) || v < 1 || v > 1024)
        return false;
    *out = (unsigned)v;
    return true;
}

/* A worker waits out each round trip: more of them than cores keep the
 * service busy, though not so many that they crowd out other clients. */
static unsigned via_jobs(void)
{
    unsigned cores = rs_default_jobs();

    return cores >= 16 ? 64 : 4 * cores;
}

static int run(int argc, char **argv)
{
    rs_sign_template_options o = { 0 };
    rs_progress progress;
    bool quiet = false;
    const char *key = NULL, *cert = NULL, *via = NULL, *hash = "sha256";
    const char *module_key = NULL, *module_cert = NULL;
    _cleanup_(cli_signer_close) cli_signer signer = { 0 };
    _cleanup_(cli_signer_close) cli_signer module_signer = { 0 };
    _cleanup_(rs_rebuild_policy_free) rs_rebuild_policy rebuilds;
    const char *attestations = NULL;
    long required = 0;
    bool signing_time = true;
    rs_error err;
    int c, rc;

    rs_rebuild_policy_init(&rebuilds);
    while ((c = cli_getopt(&cmd_sign_template, argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case 'p': o.packages_dir = optarg; break;
        case 'k': key = optarg; break;
        case 'W':
            if (cli_set_pass(&cmd_sign_template, optarg) != 0)
                return EXIT_USAGE;
            break;
        case 'c': cert = optarg; break;
        case 'V': via = optarg; break;
        case 'N': module_key = optarg; break;
        case 'M': module_cert = optarg; break;
        case 'o': o.output_dir = optarg; break;
        case 'a': o.allowlist = optarg; break;
        case 'j':
            if (!parse_jobs(optarg, &o.jobs))
                return cli_usage(&cmd_sign_template, "--jobs takes a number from 1 to 1024");
            break;
        case 'H': hash = optarg; break;
        case 'T': signing_time = false; break;
        case 'q': quiet = true; break;
        case 'R':
            if (rs_rebuild_policy_add_spec(&rebuilds, optarg, &err) < 0)
                return cli_fail(&err);
            break;
        case 'A': attestations = optarg; break;
        case 'K':
            if (!cli_parse_index(optarg, &required) || required < 1 || required > 64)
                return cli_usage(&cmd_sign_template, "--require-rebuilds takes a number from 1 to 64");
            break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc)
        return cli_usage(&cmd_sign_template, "expected exactly one TEMPLATE");
    if (!o.packages_dir || !cert || !o.output_dir || !key == !via)
        return cli_usage(&cmd_sign_template, "--packages, --cert, --output and one of --key and --via are required");
    o.template_spec = argv[optind];
    if ((rebuilds.n || attestations || required) && (!rebuilds.n || !attestations || !required))
        return cli_usage(&cmd_sign_template, "--rebuilder, --attestations and --require-rebuilds go together");
    if (required) {
        rebuilds.required = (unsigned)required;
        if (rs_rebuild_policy_open_dir(&rebuilds, attestations, &err) < 0 ||
            rs_rebuild_policy_check(&rebuilds, &err) < 0)
            return cli_fail(&err);
        o.rebuilds = &rebuilds;
    }
    if (rs_sign_options_init(&o.sign, hash, signing_time, &err) < 0)
        return cli_usage(&cmd_sign_template, "%s", err.msg);
    if (via && !o.jobs)
        o.jobs = via_jobs();
    if ((module_key && via) || (module_key && !module_cert) || (module_cert && !via && !module_key))
        return cli_usage(&cmd_sign_template, "--module-cert goes with --via, or with --module-key");
    if (cli_signer_open(&signer, key, via, cert, NULL, &err) < 0 ||
        (module_cert && cli_signer_open(&module_signer, module_key, via, module_cert, NULL, &err) < 0))
        return cli_fail(&err);
    o.signers[SIG_EFI] = signer.image;
    o.signers[SIG_LINUX_MODULE] = module_cert ? module_signer.image : signer.image;
    rs_progress_init(&progress, cmd_sign_template.name, "made", rs_progress_mode_for_stderr(quiet));
    o.progress = &progress;
    rs_cancel_on_signals();
    rc = rs_sign_template(&o, &err);
    rs_progress_finish(&progress, rc == 0);
    if (rc < 0 && rs_cancelled())
        rs_reraise();
    return rc < 0 ? cli_fail(&err) : EXIT_OK;
}

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/file.h"
#include "cli/cli.h"
#include "cli/cmd_service.h"
#include "service/daemon.h"
#include "service/service.h"

static int run(int argc, char **argv);

static const struct option longopts[] = {
    { "state", required_argument, NULL, 's' }, { "config", required_argument, NULL, 'c' },
    { "once", no_argument, NULL, 'o' },        { "json", no_argument, NULL, 'j' },
    { "status", required_argument, NULL, 'S' }, { "all-failed", no_argument, NULL, 'A' },
    { "help", no_argument, NULL, 'h' },        { 0 },
};

static const rs_optdoc service_docs[] = {
    { "state", "DIR",
      "The state directory (required by every subcommand).",
      NULL },
    { "config", "FILE",
      "init: the configuration file, see reprosign-service.json(5).",
      NULL },
    { "once", NULL,
      "run: make one pass and exit instead of serving until SIGTERM.",
      NULL },
    { "status", "pending|signed|held|published|failed",
      "status: show only requests in this state.",
      "all" },
    { "json", NULL,
      "status: print one JSON document.",
      NULL },
    { "all-failed", NULL,
      "retry: retry every failed request.",
      NULL },
    { 0 },
};

const rs_command cmd_service = {
    .name = "service",
    .summary = "the signing service: archive requests, embargo, build-time socket",
    .usage = "service init --state DIR --config FILE\n"
             "       reprosign service run --state DIR [--once]\n"
             "       reprosign service status --state DIR [--status pending|signed|held|published|failed] [--json]\n"
             "       reprosign service release --state DIR REQUEST-ID\n"
             "       reprosign service retry --state DIR (REQUEST-ID | --all-failed)\n\n"
             "init creates the state directory (0700) and records the configuration file\n"
             "(reprosign-service.json(5)). run signs the archive's pending requests\n"
             "and publishes each as OUTPUT/<request>/ (the -signed .dsc and .tar.xz, and\n"
             "signatures.tar.gz), then keeps serving the socket and polling for requests\n"
             "until SIGTERM; --once makes one pass and exits: 1 if a request failed for now\n"
             "(the archive unreachable, the token away: tried again by itself, after 1, 2,\n"
             "4... minutes), 3 if one was refused (never tried again until 'retry').\n"
             "Embargoed requests are signed but held until 'release'. Every signature is\n"
             "recorded in the transparency log ('reprosign log').\n\n"
             "With upload_key set, each published request is also uploaded, source-only:\n"
             "the .dsc and .tar.xz and a _source.changes made by dpkg-genchanges -S, the\n"
             ".dsc and .changes clearsigned through GPGME with the OpenPGP key whose full\n"
             "fingerprint upload_key gives, in the GnuPG home gnupg_home (default: GnuPG's),\n"
             "so it may sit in gpg-agent or on an OpenPGP card. The files go into the\n"
             "directory incoming under temporary names renamed into place, the .changes\n"
             "last; or upload_command (a list: program and options, e.g. [\"dput\", \"-u\",\n"
             "\"HOST\"]) runs with the .changes path appended. An embargoed request is\n"
             "uploaded at 'release'. A signature that cannot be made, or a delivery that\n"
             "fails, fails the request for now: nothing goes out unsigned.",
    .run = run,
    .options = longopts,
    .optdocs = service_docs,
    .verbs = "init run status release retry",
    .example = "reprosign service status --state /var/lib/reprosign --status failed",
};

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

void cli_service_note(void *ctx, const rs_log_fields *fields, const char *line)
{
    (void)ctx;
    rs_daemon_log(fields, line);
}

static int parse(int argc, char **argv, cli_service_args *a)
{
    int c;

    while ((c = cli_getopt(&cmd_service, argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case 's': a->state = optarg; break;
        case 'c': a->config = optarg; break;
        case 'o': a->once = true; break;
        case 'j': a->json = true; break;
        case 'S': a->status = optarg; break;
        case 'A': a->all_failed = true; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (!a->state)
        return cli_usage(&cmd_service, "--state is required");
    return -1;
}

static int do_run(const cli_service_args *a)
{
    struct sigaction sa = { .sa_handler = on_stop };
    rs_service *s = NULL;
    rs_pass_failures failed = { 0 };
    bool busy;
    rs_error err;
    int rc;

    signal(SIGPIPE, SIG_IGN);
    if (rs_service_open_exclusive(a->state, cli_service_note, NULL, &s, &busy, &err) < 0)
        return cli_fail(&err);
    rc = rs_service_load_keys(s, &err);
    if (rc == 0 && a->once) {
        rc = rs_service_pass(s, &failed, &err);
    } else if (rc == 0) {
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        rc = rs_service_serve(s, &stop_requested, &err);
    }
    rs_service_close(s);
    if (rc < 0)
        return cli_fail(&err);
    if (failed.refused) {
        fprintf(stderr, "reprosign: %zu request(s) refused, %zu failed for now (see 'reprosign service status')\n",
                failed.refused, failed.transient);
        return EXIT_REFUSED;
    }
    if (failed.transient) {
        fprintf(stderr, "reprosign: %zu request(s) failed for now and will be tried again (see 'reprosign service "
                        "status')\n", failed.transient);
        return EXIT_FAIL;
    }
    return EXIT_OK;
}

static int run(int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : NULL;
    cli_service_args a = { 0 };
    int rc;

    if (sub && (!strcmp(sub, "--help") || !strcmp(sub, "-h"))) {
        cli_help(&cmd_service);
        return EXIT_OK;
    }
    if (!sub || (strcmp(sub, "init") && strcmp(sub, "run") && strcmp(sub, "status") && strcmp(sub, "release") &&
                 strcmp(sub, "retry")))
        return cli_usage(&cmd_service, "expected init, run, status, release or retry");
    if ((rc = parse(argc - 1, argv + 1, &a)) >= 0)
        return rc;
    /* Private by default: what the service publishes it makes readable
     * file by file (service.c, publish). */
    rs_umask_set(077);
    if (!strcmp(sub, "init")) {
        rs_error err;

        if (!a.config || optind + 1 != argc)
            return cli_usage(&cmd_service, "init takes --state and --config");
        return rs_service_init(a.state, a.config, &err) < 0 ? cli_fail(&err) : EXIT_OK;
    }
    if (!strcmp(sub, "release")) {
        if (optind + 2 != argc)
            return cli_usage(&cmd_service, "release takes one REQUEST-ID");
        return cli_service_release(&a, argv[optind + 1]);
    }
    if (!strcmp(sub, "retry")) {
        if (optind + 2 - a.all_failed != argc)
            return cli_usage(&cmd_service, "retry takes one REQUEST-ID, or --all-failed");
        return cli_service_retry(&a, a.all_failed ? NULL : argv[optind + 1]);
    }
    if (optind + 1 != argc)
        return cli_usage(&cmd_service, "unexpected argument '%s'", argv[optind + 1]);
    return !strcmp(sub, "run") ? do_run(&a) : cli_service_status(&a);
}

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "service/service.h"

static int run(int argc, char **argv);

const rs_command cmd_service = {
    .name = "service",
    .summary = "the signing service: archive requests, embargo, build-time socket",
    .usage = "service init --state DIR --config FILE\n"
             "       reprosign service run --state DIR [--once]\n"
             "       reprosign service status --state DIR [--json]\n"
             "       reprosign service release --state DIR REQUEST-ID\n\n"
             "init creates the state directory and records the configuration file (see\n"
             "README.md, \"Signing service\"). run signs the archive's pending requests and\n"
             "publishes each as OUTPUT/<request>/ (the -signed .dsc and .tar.xz, and\n"
             "signatures.tar.xz), then keeps serving the socket and polling for requests\n"
             "until SIGTERM; --once makes one pass and exits (1 if a request failed).\n"
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
             "fails, fails the request: nothing goes out unsigned.",
    .run = run,
};

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void print_note(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "reprosign service: %s\n", line);
}

typedef struct args {
    const char *state, *config;
    bool once, json;
} args;

static int parse(int argc, char **argv, args *a)
{
    static const struct option longopts[] = {
        { "state", required_argument, NULL, 's' }, { "config", required_argument, NULL, 'c' },
        { "once", no_argument, NULL, 'o' },        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },        { 0 },
    };
    int c;

    while ((c = cli_getopt(&cmd_service, argc, argv, "s:c:ojh", longopts)) != -1) {
        switch (c) {
        case 's': a->state = optarg; break;
        case 'c': a->config = optarg; break;
        case 'o': a->once = true; break;
        case 'j': a->json = true; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (!a->state)
        return cli_usage(&cmd_service, "--state is required");
    return -1;
}

static int do_run(const args *a)
{
    struct sigaction sa = { .sa_handler = on_stop };
    rs_service *s = NULL;
    size_t failed = 0;
    bool busy;
    rs_error err;
    int rc;

    signal(SIGPIPE, SIG_IGN);
    if (rs_service_open(a->state, true, print_note, NULL, &s, &busy, &err) < 0)
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
    if (failed) {
        fprintf(stderr, "reprosign: %zu request(s) failed (see 'reprosign service status')\n", failed);
        return EXIT_FAIL;
    }
    return EXIT_OK;
}

static void print_table(json_t *doc)
{
    json_t *list = json_object_get(doc, "requests"), *r;
    size_t i;

    json_array_foreach(list, i, r) {
        const char *reason = json_string_value(json_object_get(r, "reason"));

        printf("%-10s %-60s %s%s%s\n", json_string_value(json_object_get(r, "status")),
               json_string_value(json_object_get(r, "id")), json_string_value(json_object_get(r, "suite")),
               reason ? "  " : "", reason ? reason : "");
    }
}

static int do_status(const args *a)
{
    rs_service *s = NULL;
    json_t *doc = NULL;
    bool busy;
    rs_error err;
    int rc;

    if (rs_service_open(a->state, false, NULL, NULL, &s, &busy, &err) < 0)
        return cli_fail(&err);
    rc = rs_service_status(s, &doc, &err);
    rs_service_close(s);
    if (rc < 0)
        return cli_fail(&err);
    if (a->json)
        return cli_json_print(doc);
    print_table(doc);
    json_decref(doc);
    return EXIT_OK;
}

/* With no service running, publish at once; otherwise mark it released
 * and let the running service publish it on its next pass. */
static int do_release(const args *a, const char *id)
{
    rs_service *s = NULL;
    bool busy, now;
    rs_error err;
    int rc;

    if (rs_service_open(a->state, true, print_note, NULL, &s, &busy, &err) < 0) {
        if (!busy || rs_service_open(a->state, false, print_note, NULL, &s, &busy, &err) < 0)
            return cli_fail(&err);
    }
    now = !busy;
    rc = now ? rs_service_load_keys(s, &err) : 0;
    if (rc == 0)
        rc = rs_service_release(s, id, now, &err);
    rs_service_close(s);
    if (rc < 0)
        return cli_fail(&err);
    if (!now)
        fprintf(stderr, "reprosign service: %s: released; the running service publishes it on its next pass\n", id);
    return EXIT_OK;
}

static int run(int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : NULL;
    args a = { 0 };
    int rc;

    if (sub && (!strcmp(sub, "--help") || !strcmp(sub, "-h"))) {
        cli_help(&cmd_service);
        return EXIT_OK;
    }
    if (!sub || (strcmp(sub, "init") && strcmp(sub, "run") && strcmp(sub, "status") && strcmp(sub, "release")))
        return cli_usage(&cmd_service, "expected init, run, status or release");
    if ((rc = parse(argc - 1, argv + 1, &a)) >= 0)
        return rc;
    if (!strcmp(sub, "init")) {
        rs_error err;

        if (!a.config || optind + 1 != argc)
            return cli_usage(&cmd_service, "init takes --state and --config");
        return rs_service_init(a.state, a.config, &err) < 0 ? cli_fail(&err) : EXIT_OK;
    }
    if (!strcmp(sub, "release")) {
        if (optind + 2 != argc)
            return cli_usage(&cmd_service, "release takes one REQUEST-ID");
        return do_release(&a, argv[optind + 1]);
    }
    if (optind + 1 != argc)
        return cli_usage(&cmd_service, "unexpected argument '%s'", argv[optind + 1]);
    return !strcmp(sub, "run") ? do_run(&a) : do_status(&a);
}

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "cli/cmd_log.h"
#include "crypto/ossl.h"
#include "crypto/trust.h"
#include "translog/log.h"
#include "translog/migrate.h"
#include "translog/monitor.h"
#include "translog/proof.h"

static int run(int argc, char **argv);

static const struct option longopts[] = {
    { "vkey", required_argument, NULL, 'v' },      { "key", required_argument, NULL, 'k' },
    { "output", required_argument, NULL, 'o' },    { "entry", required_argument, NULL, 'e' },
    { "witness", required_argument, NULL, 'w' },   { "min-witnesses", required_argument, NULL, 'm' },
    { "batch", required_argument, NULL, 'b' },     { "cert", required_argument, NULL, 'c' },
    { "cosigner", no_argument, NULL, 'C' },        { "archive", required_argument, NULL, 'a' },
    { "json", no_argument, NULL, 'j' },            { "help", no_argument, NULL, 'h' },
    { 0 },
};

static const rs_optdoc log_docs[] = {
    { "vkey", "VKEY", "The log's verifier key (PREFIX.vkey from keygen, or the service's STATE/log.vkey),\n"
                      "pinned: a log is never checked against key material found in it.", NULL },
    { "key", "KEY", "A note signer key (PREFIX.key): the log's, for append and migrate; a witness's,\n"
                    "for cosign.", NULL },
    { "output", "PREFIX", "Where keygen writes PREFIX.key (0600) and PREFIX.vkey.", NULL },
    { "entry", "FILE", "An entry's bytes: prove finds its index, verify-proof checks the proof is for it.",
      NULL },
    { "witness", "VKEY", "A witness's verifier key whose cosignature on the checkpoint counts; may repeat.",
      NULL },
    { "min-witnesses", "K", "How many of the --witness keys must have cosigned.", "0" },
    { "batch", "N", "append: entries per checkpoint.", "all of standard input in one" },
    { "cert", "CERT", "migrate: the certificate that signed the old JSONL log's heads. monitor: the\n"
                      "service's certificates (PEM, one or more a file; may repeat): a signature in a\n"
                      "binary package that verifies with one of them is the service's.", NULL },
    { "cosigner", NULL, "keygen: make a witness (cosignature/v1) key instead of a log key.", NULL },
    { "archive", "DIR", "monitor: the archive whose published packages (source tarballs, 1.0 sources'\n"
                        ".diff.gz, binary packages) the log is checked against.", NULL },
    { "json", NULL, "verify, prove, verify-proof, consistency: print the result as one JSON document\n"
                    "(docs/json.md) instead of text.", NULL },
    { 0 },
};

const rs_command cmd_log = {
    .name = "log",
    .summary = "the signing service's transparency log: keys, audits, offline proofs, witnesses",
    .usage = "log keygen ORIGIN --output PREFIX [--cosigner]\n"
             "       reprosign log verify LOGDIR --vkey VKEY [--witness VKEY]... [--min-witnesses K] [--json]\n"
             "       reprosign log prove LOGDIR (INDEX | --entry FILE) [--json]\n"
             "       reprosign log verify-proof --vkey VKEY --entry FILE PROOF [--witness VKEY]... [--min-witnesses K]\n"
             "                                  [--json]\n"
             "       reprosign log consistency LOGDIR OLD-CHECKPOINT --vkey VKEY [--json]\n"
             "       reprosign log cosign LOGDIR OLD-CHECKPOINT --vkey VKEY --key WITNESS-KEY\n"
             "       reprosign log append LOGDIR --key KEY [--batch N]  < entries (JSON, one a line)\n"
             "       reprosign log migrate OLD-LOGDIR NEW-LOGDIR --key KEY --cert CERT\n"
             "       reprosign log monitor LOGDIR --archive DIR --vkey VKEY [--cert CERT]...\n\n"
             "The log is a c2sp.org/tlog-tiles directory whose checkpoint is a signed note\n"
             "(docs/transparency-log.md). keygen writes PREFIX.key (the signer key, 0600)\n"
             "and PREFIX.vkey (the verifier key to publish and pin); --cosigner makes a\n"
             "witness key. verify streams every entry bundle and tile and names the first\n"
             "that does not fit. prove prints a c2sp.org/tlog-proof@v1 for the entry at\n"
             "INDEX or with the bytes of FILE; verify-proof checks one offline.\n"
             "consistency prints the proof that the log extends OLD-CHECKPOINT; cosign\n"
             "checks that and prints the witness's cosignature line of the log's\n"
             "checkpoint. monitor audits the log, then reports every logged archive\n"
             "signature that no package under DIR carries and every signature a package\n"
             "there carries that the log lacks, and fails on either: .sig files in\n"
             "tarballs (nested ones too) and in 1.0 sources' .diff.gz, and every image in\n"
             "a .deb or .udeb signed by one of the --cert certificates, whose digest an\n"
             "entry must hold (reprosign-log(5)). Every command that checks takes --vkey:\n"
             "a log is never trusted by key material found in it.\n"
             "The log's on-disk format is described in reprosign-log(5).",
    .run = run,
    .options = longopts,
    .optdocs = log_docs,
    .verbs = "keygen verify prove verify-proof consistency cosign append migrate monitor",
    .example = "reprosign log verify /srv/reprosign/log --vkey /var/lib/reprosign/log.vkey",
};

static int do_keygen(const log_args *a)
{
    rs_error err;

    if (a->n_pos != 1 || !a->output)
        return cli_usage(&cmd_log, "keygen takes ORIGIN and --output PREFIX");
    if (rs_log_keygen(a->pos[0], a->cosigner ? RS_NOTE_ALG_COSIGNATURE : RS_NOTE_ALG_ED25519,
                      a->output, &err) < 0)
        return cli_fail(&err);
    printf("%s.key (private, 0600) and %s.vkey written\n", a->output, a->output);
    return EXIT_OK;
}

static int print_audit(const log_args *a, const char *origin, const rs_audit_result *r)
{
    char root[2 * RS_HASH_LEN + 1];

    if (a->json)
        return cli_json_print(json_pack("{s:s, s:s, s:I, s:o, s:I, s:I}", "log", a->pos[0], "origin", origin, "size",
                                        (json_int_t)r->size, "root", log_hash_json(&r->root), "tiles",
                                        (json_int_t)r->tiles, "min_witnesses", (json_int_t)a->min_witnesses));
    rs_hex(r->root.b, RS_HASH_LEN, root);
    printf("%s: %llu entries and %llu tiles, all consistent with the checkpoint\nroot %s\n", a->pos[0],
           (unsigned long long)r->size, (unsigned long long)r->tiles, root);
    return EXIT_OK;
}

static int do_verify(const log_args *a)
{
    rs_note_key vkey = { 0 }, witnesses[LOG_MAX_WITNESSES] = { 0 };
    rs_audit_result r;
    rs_error err;
    int rc;

    if (a->n_pos != 1)
        return cli_usage(&cmd_log, "verify takes LOGDIR");
    if ((rc = log_load_keys(a, &vkey, witnesses)) != EXIT_OK)
        return rc;
    rc = rs_log_audit(a->pos[0], &vkey, witnesses, a->n_witnesses, (size_t)a->min_witnesses, &r, &err) < 0
             ? cli_fail(&err)
             : print_audit(a, vkey.name, &r);
    log_free_keys(&vkey, witnesses, a->n_witnesses);
    return rc;
}

/* Entries as JSON objects, one a line, appended --batch at a time. */
static int do_append(const log_args *a)
{
    _cleanup_(rs_translogp) rs_translog *l = NULL;
    size_t cap = a->batch > 0 ? (size_t)a->batch : 1000, n = 0, len = 0;
    _cleanup_free_ json_t **batch = calloc(cap, sizeof(json_t *));
    _cleanup_free_ char *line = NULL;
    rs_error err;
    int rc = 0;

    if (a->n_pos != 1 || !a->key)
        return cli_usage(&cmd_log, "append takes LOGDIR and --key KEY");
    if (!batch || rs_translog_create(a->pos[0], a->key, &l, &err) < 0)
        return batch ? cli_fail(&err) : EXIT_FAIL;
    for (ssize_t got; rc == 0 && (got = getline(&line, &len, stdin)) >= 0;) {
        if (got <= 1)
            continue;
        batch[n] = json_loads(line, JSON_REJECT_DUPLICATES, NULL);   /* json_is_object() reads it twice */
        if (!json_is_object(batch[n])) {
            json_decref(batch[n]);
            rs_fail(&err, "stdin: entry %llu is not a JSON object", (unsigned long long)rs_translog_size(l) + n + 1);
            rc = -1;
            break;
        }
        if (++n == cap)
            rc = rs_translog_append(l, batch, n, NULL, &err);
        for (size_t i = 0; n == cap && i < n; i++)
            json_decref(batch[i]);
        n = n == cap ? 0 : n;
    }
    if (rc == 0 && n)
        rc = rs_translog_append(l, batch, n, NULL, &err);
    for (size_t i = 0; i < n; i++)
        json_decref(batch[i]);
    if (rc < 0)
        return cli_fail(&err);
    printf("%s: %llu entries\n", a->pos[0], (unsigned long long)rs_translog_size(l));
    return EXIT_OK;
}

static int do_migrate(const log_args *a)
{
    rs_error err;
    uint64_t n, heads;

    if (a->n_pos != 2 || !a->key || a->n_certs != 1)
        return cli_usage(&cmd_log, "migrate takes OLD-LOGDIR NEW-LOGDIR, --key KEY and one --cert CERT (the old log's "
                                   "certificate, pinned)");
    if (rs_log_migrate(a->pos[0], a->cert, a->pos[1], a->key, &n, &heads, &err) < 0)
        return cli_fail(&err);
    printf("%s: %llu entries; the roots of all %llu signed heads of %s are reproduced\n", a->pos[1],
           (unsigned long long)n, (unsigned long long)heads, a->pos[0]);
    return EXIT_OK;
}

static void report_unlogged(void *ctx, const char *file, const char *member)
{
    (void)ctx;
    printf("%s: %s: a published signature that the log lacks\n", file, member);
}

static void report_unlogged_image(void *ctx, const char *deb, const char *member, const char *digest,
                                  const char *signer)
{
    (void)ctx;
    printf("%s: %s: signed by the service's certificate %s, image digest %s, which the log lacks\n", deb, member,
           signer, digest);
}

static void report_unchecked(void *ctx, const char *file, const char *member, const char *why)
{
    (void)ctx;
    printf("%s: %s: not judged: %s\n", file, member, why);
}

/* The service's certificates, from every --cert. */
static int load_service_certs(const log_args *a, rs_trust *t, rs_error *err)
{
    if (rs_trust_init(t, err) < 0)
        return -1;
    for (size_t i = 0; i < a->n_certs; i++)
        if (rs_trust_add_file(t, a->certs[i], err) < 0)
            return rs_error_prefix(err, "%s", a->certs[i]);
    return 0;
}

static void report_unpublished(void *ctx, uint64_t index, const rs_hash *sig)
{
    char hex[2 * RS_HASH_LEN + 1];

    rs_hex(sig->b, RS_HASH_LEN, hex);
    printf("%s: entry %llu: signature %s is carried by no published package\n", (const char *)ctx,
           (unsigned long long)index, hex);
}

static int do_monitor(const log_args *a)
{
    rs_note_key vkey = { 0 }, witnesses[LOG_MAX_WITNESSES] = { 0 };
    rs_monitor_report r = { .ctx = a->pos[0], .unlogged_fn = report_unlogged, .unlogged_image_fn = report_unlogged_image,
                            .unchecked_fn = report_unchecked, .unpublished_fn = report_unpublished };
    _cleanup_trust_ rs_trust service = { 0 };
    rs_audit_result res;
    rs_error err;
    int rc;

    if (a->n_pos != 1 || !a->archive)
        return cli_usage(&cmd_log, "monitor takes LOGDIR and --archive DIR");
    if (a->n_certs && load_service_certs(a, &service, &err) < 0)
        return cli_fail(&err);
    if ((rc = log_load_keys(a, &vkey, witnesses)) != EXIT_OK)
        return rc;
    rc = rs_log_audit(a->pos[0], &vkey, witnesses, a->n_witnesses, (size_t)a->min_witnesses, &res, &err) < 0 ||
         rs_log_monitor(a->pos[0], res.size, a->archive, a->n_certs ? &service : NULL, &r, &err) < 0;
    log_free_keys(&vkey, witnesses, a->n_witnesses);
    if (rc)
        return cli_fail(&err);
    printf("%s: %zu archive signatures logged, %zu published in %zu tarballs, %zu diffs and %zu binary packages "
           "under %s (%zu images signed by the service); %zu entries from the socket not checked; %zu unpublished, "
           "%zu unlogged, %zu not judged\n", a->pos[0], r.logged, r.published, r.tarballs, r.diffs, r.debs, a->archive,
           r.images, r.not_archive, r.unpublished, r.unlogged, r.unchecked);
    return r.unpublished || r.unlogged || r.unchecked ? EXIT_FAIL : EXIT_OK;
}

static int parse_opt(log_args *a, int c)
{
    switch (c) {
    case 'v': a->vkey = optarg; return 0;
    case 'k': a->key = optarg; return 0;
    case 'o': a->output = optarg; return 0;
    case 'e': a->entry = optarg; return 0;
    case 'c':
        if (a->n_certs == LOG_MAX_CERTS)
            return cli_usage(&cmd_log, "at most %d --cert files", LOG_MAX_CERTS);
        a->cert = a->certs[a->n_certs++] = optarg;
        return 0;
    case 'C': a->cosigner = true; return 0;
    case 'a': a->archive = optarg; return 0;
    case 'j': a->json = true; return 0;
    case 'w':
        if (a->n_witnesses == LOG_MAX_WITNESSES)
            return cli_usage(&cmd_log, "at most %d --witness keys", LOG_MAX_WITNESSES);
        a->witness[a->n_witnesses++] = optarg;
        return 0;
    case 'm':
        return cli_parse_index(optarg, &a->min_witnesses) ? 0 : cli_usage(&cmd_log, "--min-witnesses: a number");
    case 'b':
        return cli_parse_index(optarg, &a->batch) && a->batch > 0 ? 0 : cli_usage(&cmd_log, "--batch: a number > 0");
    case -2: return -2;
    default: return EXIT_USAGE;
    }
}

static int run(int argc, char **argv)
{
    log_args a = { .cmd = &cmd_log };
    const char *sub;
    int c, rc;

    while ((c = cli_getopt(&cmd_log, argc, argv, "h", longopts)) != -1)
        if ((rc = parse_opt(&a, c)) != 0)
            return rc == -2 ? EXIT_OK : rc;
    sub = optind < argc ? argv[optind] : "";
    a.pos = argv + optind + 1;
    a.n_pos = optind < argc ? argc - optind - 1 : 0;
    if (a.json && strcmp(sub, "verify") && strcmp(sub, "prove") && strcmp(sub, "verify-proof") &&
        strcmp(sub, "consistency"))
        return cli_usage(&cmd_log, "--json applies to verify, prove, verify-proof and consistency");
    if (!strcmp(sub, "keygen"))
        return do_keygen(&a);
    if (!strcmp(sub, "verify"))
        return do_verify(&a);
    if (!strcmp(sub, "append"))
        return do_append(&a);
    if (!strcmp(sub, "migrate"))
        return do_migrate(&a);
    if (!strcmp(sub, "prove"))
        return log_prove(&a);
    if (!strcmp(sub, "verify-proof"))
        return log_verify_proof(&a);
    if (!strcmp(sub, "consistency"))
        return log_consistency(&a);
    if (!strcmp(sub, "cosign"))
        return log_cosign(&a);
    if (!strcmp(sub, "monitor"))
        return do_monitor(&a);
    return cli_usage(&cmd_log,
                     "expected keygen, verify, prove, verify-proof, consistency, cosign, append, migrate or monitor");
}

/* Where one socket signature's work goes: each step a request takes
 * through the client and the signing service, timed alone on one thread
 * in a loop, with no socket in between. The sum, against what one batch
 * signature does (prepare, sign, finish), is the best share of batch
 * throughput the socket could reach if its round trips cost nothing.
 *   bench_service_parts KEY CERT FILE LOGDIR      (LOGDIR: a new directory) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crypto/ossl.h"
#include "ops/offline.h"
#include "ops/ops.h"
#include "service/proto.h"
#include "translog/log.h"

typedef struct parts {
    const rs_format *format;
    rs_digest digest;
    rs_sign_options opts;
    rs_signer *signer;
    rs_known_certs known;
    char fingerprint[65];
    rs_offline_request request;
    char *wire;
    rs_bytes value;
    char *answer;
    rs_translog *log;
} parts;

typedef int (*step_fn)(parts *p, rs_error *err);

static int prepare(parts *p, rs_error *err)
{
    rs_offline_request r;

    if (rs_offline_prepare_digest(p->format, &p->digest, p->signer->cert, NULL, &p->opts, &r, err) < 0)
        return -1;
    rs_offline_request_free(&r);
    return 0;
}

static int write_request(parts *p, rs_error *err)
{
    char *json;

    if (rs_offline_request_write_wire(&p->request, p->fingerprint, &json, err) < 0)
        return -1;
    free(json);
    return 0;
}

static int read_request(parts *p, rs_error *err)
{
    rs_offline_request r;

    if (rs_offline_request_read_known(p->wire, strlen(p->wire), &p->known, &r, err) < 0)
        return -1;
    rs_offline_request_free(&r);
    return 0;
}

static int sign(parts *p, rs_error *err)
{
    _cleanup_bytes_ rs_bytes value = { 0 };

    return rs_offline_sign(&p->request, p->signer, &value, err);
}

/* An entry with the service's members, the same size as its own. */
static int log_append(parts *p, rs_error *err)
{
    char digest[RS_DIGEST_STR];
    json_auto_t *entry = NULL;

    rs_digest_format(&p->request.tbs, digest, sizeof(digest));
    entry = json_pack("{s:{s:i, s:i}, s:s, s:n, s:s, s:s, s:s, s:I}", "client", "uid", 1000, "gid", 1000, "format",
                      p->format->name, "path", "signed_digest", digest, "signer_fingerprint", p->fingerprint,
                      "signature_sha256", p->fingerprint, "time", (json_int_t)time(NULL));
    if (!entry)
        return rs_fail(err, "out of memory");
    return rs_translog_append(p->log, &entry, 1, NULL, err);
}

static int write_answer(parts *p, rs_error *err)
{
    char *text = rs_answer_signed(&p->value, 12345);

    free(text);
    return text ? 0 : rs_fail(err, "out of memory");
}

static int read_answer(parts *p, rs_error *err)
{
    _cleanup_bytes_ rs_bytes value = { 0 };
    bool refused;

    return rs_answer_read(p->answer, strlen(p->answer), &value, NULL, &refused, err);
}

static int finish(parts *p, rs_error *err)
{
    _cleanup_bytes_ rs_bytes der = { 0 };

    return rs_offline_finish(&p->request, &p->value, &der, err);
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Microseconds per call: the best of three timed loops of n calls. */
static double time_step(parts *p, step_fn fn, int n, rs_error *err)
{
    double best = 0;

    for (int round = 0; round < 3; round++) {
        double t0 = now(), us;

        for (int i = 0; i < n; i++)
            if (fn(p, err) < 0)
                return -1;
        us = (now() - t0) / n * 1e6;
        if (round == 0 || us < best)
            best = us;
    }
    return best;
}

static int set_up(parts *p, char **argv, const char *logdir, rs_error *err)
{
    rs_image img = { .in.fd = -1 };
    int rc;

    if (rs_sign_options_init(&p->opts, "sha256", true, err) < 0 || rs_image_open(&img, argv[3], err) < 0)
        return -1;
    rc = img.format->digest(&img, p->opts.md, &p->digest, err);
    p->format = img.format;
    rs_image_close(&img);
    if (rc < 0 || rs_signer_open(argv[1], argv[2], &p->signer, err) < 0 ||
        rs_known_certs_add(&p->known, p->signer->cert, err) < 0)
        return -1;
    rs_x509_fingerprint(p->signer->cert, p->fingerprint);
    if (rs_offline_prepare_digest(p->format, &p->digest, p->signer->cert, NULL, &p->opts, &p->request, err) < 0 ||
        rs_offline_request_write_wire(&p->request, p->fingerprint, &p->wire, err) < 0 ||
        rs_offline_sign(&p->request, p->signer, &p->value, err) < 0)
        return -1;
    if (!(p->answer = rs_answer_signed(&p->value, 12345)))
        return rs_fail(err, "out of memory");
    {
        _cleanup_free_ char *prefix = NULL, *key = NULL;

        if (asprintf(&prefix, "%s-key", logdir) < 0 || asprintf(&key, "%s.key", prefix) < 0)
            return rs_fail(err, "out of memory");
        if (rs_log_keygen("bench.example/reprosign", RS_NOTE_ALG_ED25519, prefix, err) < 0)
            return -1;
        return rs_translog_create(logdir, key, &p->log, err);
    }
}

int main(int argc, char **argv)
{
    static const struct {
        const char *side, *what;
        step_fn fn;
        int n;
        bool batch;              /* one batch signature does this step too */
    } steps[] = {
        { "client", "prepare the request", prepare, 5000, true },
        { "client", "request to JSON", write_request, 20000, false },
        { "service", "request from JSON, rebuilt", read_request, 5000, false },
        { "service", "sign (RSA)", sign, 300, true },
        { "service", "log entry, appended", log_append, 5000, false },
        { "service", "answer to JSON", write_answer, 20000, false },
        { "client", "answer from JSON", read_answer, 20000, false },
        { "client", "finish (check, wrap)", finish, 2000, true },
    };
    parts p = { 0 };
    rs_error err;
    double batch = 0, socket = 0;

    if (argc != 5) {
        fprintf(stderr, "usage: %s KEY CERT FILE LOGDIR\n", argv[0]);
        return 2;
    }
    if (set_up(&p, argv, argv[4], &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    printf("%-8s %-30s %10s\n", "", "step (one thread, no socket)", "us");
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        double us = time_step(&p, steps[i].fn, steps[i].n, &err);

        if (us < 0) {
            fprintf(stderr, "%s: %s\n", steps[i].what, err.msg);
            return 1;
        }
        printf("%-8s %-30s %10.1f\n", steps[i].side, steps[i].what, us);
        socket += us;
        batch += steps[i].batch ? us : 0;
    }
    printf("%-39s %10.1f\n%-39s %10.1f\n", "batch signature (prepare, sign, finish)", batch,
           "socket signature (every step)", socket);
    printf("batch / socket: %.0f%%, the socket's best share of batch throughput without round trips\n",
           100 * batch / socket);
    rs_translog_close(p.log);
    rs_signer_free(p.signer);
    rs_known_certs_free(&p.known);
    rs_offline_request_free(&p.request);
    rs_bytes_free(&p.value);
    free(p.wire);
    free(p.answer);
    return 0;
}

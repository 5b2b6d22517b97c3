/* Signatures per second: through the signing service's socket with N
 * concurrent clients, each with WINDOW requests in flight (default 1), or
 * (SOCKET "-") in one process signing as a batch with the same key on one
 * thread per core. Both do the same work per signature (build the
 * container around the image digest, sign, finish), so the difference is
 * the socket, the request checks and the log. Each socket request signs a
 * digest of its own (the image's, its first 8 bytes replaced by a
 * counter), so that each log entry differs as a real one would, with its
 * own leaf-index bucket to sync. Through the socket it also
 * prints the median and 99th percentile of a request's latency, from
 * sending it to its answer, in milliseconds. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ops/offline.h"
#include "ops/ops.h"
#include "pipeline/batch.h"
#include "service/proto.h"

typedef struct bench {
    rs_signer *signer;               /* batch mode */
    const char *socket;              /* socket mode */
    const rs_format *format;
    rs_digest digest;
    rs_sign_options opts;
    X509 *cert;
    size_t per_client;
    size_t window;                   /* requests each client keeps in flight */
    int failures;
    double *latency;                 /* seconds, one per answer */
    size_t answered;
    uint64_t requests;               /* counted into each request's digest */
} bench;

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int finish(const rs_offline_request *r, const rs_bytes *value, rs_error *err)
{
    _cleanup_bytes_ rs_bytes der = { 0 };

    return rs_offline_finish(r, value, &der, err);
}

static int batch_item(void *ctx, size_t i, rs_error *err)
{
    bench *b = ctx;
    rs_offline_request r;
    _cleanup_bytes_ rs_bytes value = { 0 };
    int rc;

    (void)i;
    if (rs_offline_prepare_digest(b->format, &b->digest, b->cert, NULL, &b->opts, &r, err) < 0)
        return -1;
    rc = rs_offline_sign(&r, b->signer, &value, err);
    if (rc == 0)
        rc = finish(&r, &value, err);
    rs_offline_request_free(&r);
    return rc;
}

/* Keeps `window` requests in flight: each answer is finished after the
 * next request has gone out, so the service always has one waiting. */
static int run_client(bench *b, rs_client *c, rs_error *err)
{
    rs_offline_request *ring = calloc(b->window, sizeof(*ring));
    double *sent_at = calloc(b->window, sizeof(*sent_at));
    size_t sent = 0, done = 0;
    int rc = ring && sent_at ? 0 : rs_fail(err, "out of memory");

    while (rc == 0 && done < b->per_client) {
        if (sent < b->per_client && sent - done < b->window) {
            rs_offline_request *r = &ring[sent % b->window];
            rs_digest d = b->digest;
            uint64_t k = __atomic_fetch_add(&b->requests, 1, __ATOMIC_RELAXED);

            memcpy(d.bytes, &k, sizeof(k));
            rc = rs_offline_prepare_digest(b->format, &d, b->cert, NULL, &b->opts, r, err);
            sent_at[sent % b->window] = now();
            if (rc == 0 && (rc = rs_client_send(c, r, err)) < 0)
                rs_offline_request_free(r);
            sent += rc == 0;
        } else {
            rs_offline_request *r = &ring[done % b->window];
            _cleanup_bytes_ rs_bytes value = { 0 };

            rc = rs_client_receive(c, &value, NULL, err);
            if (rc == 0)
                b->latency[__atomic_fetch_add(&b->answered, 1, __ATOMIC_RELAXED)] = now() - sent_at[done % b->window];
            if (rc == 0)
                rc = finish(r, &value, err);
            rs_offline_request_free(r);
            done++;
        }
    }
    while (done < sent)
        rs_offline_request_free(&ring[done++ % b->window]);
    free(ring);
    free(sent_at);
    return rc;
}

static void *client(void *arg)
{
    bench *b = arg;
    rs_client c;
    rs_error err;

    if (rs_client_open(b->socket, &c, &err) < 0 || run_client(b, &c, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        __atomic_add_fetch(&b->failures, 1, __ATOMIC_RELAXED);
    }
    rs_client_close(&c);
    return NULL;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    bench b = { 0 };
    rs_image img = { .in.fd = -1 };
    rs_error err;
    size_t clients, total;
    double t0;

    if (argc != 7 && argc != 8) {
        fprintf(stderr, "usage: %s KEY CERT FILE SOCKET|- CLIENTS SIGNATURES [WINDOW]\n", argv[0]);
        return 2;
    }
    b.window = argc == 8 ? strtoul(argv[7], NULL, 10) : 1;
    if (b.window < 1)
        b.window = 1;
    clients = strtoul(argv[5], NULL, 10);
    total = strtoul(argv[6], NULL, 10);
    b.per_client = clients ? total / clients : 0;
    if (rs_sign_options_init(&b.opts, "sha256", true, &err) < 0 || rs_image_open(&img, argv[3], &err) < 0 ||
        img.format->digest(&img, b.opts.md, &b.digest, &err) < 0 ||
        (strcmp(argv[4], "-") == 0 ? rs_signer_open(argv[1], argv[2], &b.signer, &err) : rs_cert_open(argv[2], &b.cert, &err)) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    b.format = img.format;
    if (b.signer)
        b.cert = b.signer->cert;
    t0 = now();
    if (b.signer) {
        if (rs_batch_run(total, 0, batch_item, &b, &err) < 0) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
    } else {
        pthread_t *t = calloc(clients, sizeof(*t));

        b.socket = argv[4];
        total = b.per_client * clients;
        if (!(b.latency = calloc(total ? total : 1, sizeof(double))))
            return 1;
        for (size_t i = 0; i < clients; i++)
            pthread_create(&t[i], NULL, client, &b);
        for (size_t i = 0; i < clients; i++)
            pthread_join(t[i], NULL);
        free(t);
    }
    if (b.latency && b.answered) {
        double rate = (double)total / (now() - t0);

        qsort(b.latency, b.answered, sizeof(double), by_value);
        printf("%.1f %.3f %.3f\n", rate, 1e3 * b.latency[b.answered / 2], 1e3 * b.latency[b.answered * 99 / 100]);
    } else {
        printf("%.1f\n", (double)total / (now() - t0));
    }
    free(b.latency);
    rs_image_close(&img);
    return b.failures ? 1 : 0;
}

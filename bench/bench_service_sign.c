/* Signatures per second: through the signing service's socket with N
 * concurrent clients, or (SOCKET "-") in one process signing as a batch
 * with the same key on one thread per core. Both do the same work per
 * signature (build the container around the image digest, sign, finish),
 * so the difference is the socket, the request checks and the log. */
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
    int failures;
} bench;

static int one(bench *b, int fd, rs_error *err)
{
    rs_offline_request r;
    rs_bytes value = { 0 }, der = { 0 };
    int rc = rs_offline_prepare_digest(b->format, &b->digest, b->cert, NULL, &b->opts, &r, err);

    if (rc == 0)
        rc = fd < 0 ? rs_offline_sign(&r, b->signer, &value, err) : rs_client_sign(fd, &r, &value, NULL, err);
    if (rc == 0)
        rc = rs_offline_finish(&r, &value, &der, err);
    rs_offline_request_free(&r);
    rs_bytes_free(&value);
    rs_bytes_free(&der);
    return rc;
}

static int batch_item(void *ctx, size_t i, rs_error *err)
{
    (void)i;
    return one(ctx, -1, err);
}

static void *client(void *arg)
{
    bench *b = arg;
    rs_error err;
    int fd = -1;

    if (rs_client_connect(b->socket, &fd, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        __atomic_add_fetch(&b->failures, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    for (size_t i = 0; i < b->per_client; i++)
        if (one(b, fd, &err) < 0) {
            fprintf(stderr, "%s\n", err.msg);
            __atomic_add_fetch(&b->failures, 1, __ATOMIC_RELAXED);
            break;
        }
    close(fd);
    return NULL;
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    bench b = { 0 };
    rs_image img = { .in.fd = -1 };
    rs_error err;
    size_t clients, total;
    double t0;

    if (argc != 7) {
        fprintf(stderr, "usage: %s KEY CERT FILE SOCKET|- CLIENTS SIGNATURES\n", argv[0]);
        return 2;
    }
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
        for (size_t i = 0; i < clients; i++)
            pthread_create(&t[i], NULL, client, &b);
        for (size_t i = 0; i < clients; i++)
            pthread_join(t[i], NULL);
        free(t);
    }
    printf("%.1f\n", (double)total / (now() - t0));
    rs_image_close(&img);
    return b.failures ? 1 : 0;
}

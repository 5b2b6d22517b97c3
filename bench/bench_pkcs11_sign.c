/* Signs N distinct SHA-256 digests (one per kernel module, say) with one
 * signer, opened once as a real run would, split over THREADS threads
 * (default 1) as sign-template's --jobs does, and reports the rate.
 *   bench_pkcs11_sign KEY CERT [N [THREADS]] */
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "base/cleanup.h"
#include "crypto/signer.h"

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of every thread of the process: what signing cost, whatever
 * else the machine was running. */
static double cpu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define MAX_THREADS 64

static int sign_many(rs_signer *s, long from, long n, rs_error *err)
{
    for (long i = from; i < from + n; i++) {
        _cleanup_bytes_ rs_bytes sig = { 0 };
        uint8_t digest[32];
        unsigned int len = sizeof(digest);

        if (!EVP_Digest(&i, sizeof(i), digest, &len, EVP_sha256(), NULL))
            return rs_fail(err, "digest failed");
        if (rs_signer_sign_digest(s, EVP_sha256(), digest, len, &sig, err) < 0)
            return -1;
    }
    return 0;
}

typedef struct worker {
    rs_signer *s;
    long from, n;
    int rc;
    rs_error err;
} worker;

static void *work(void *arg)
{
    worker *w = arg;

    w->rc = sign_many(w->s, w->from, w->n, &w->err);
    return NULL;
}

static int sign_threads(rs_signer *s, long n, int threads, rs_error *err)
{
    pthread_t t[MAX_THREADS];
    worker w[MAX_THREADS];
    int rc = 0;

    for (int i = 0; i < threads; i++) {
        w[i] = (worker){ .s = s, .from = n * i / threads, .n = n * (i + 1) / threads - n * i / threads };
        if (pthread_create(&t[i], NULL, work, &w[i]))
            return rs_fail(err, "cannot start a thread");
    }
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        if (w[i].rc < 0 && rc == 0) {
            *err = w[i].err;
            rc = -1;
        }
    }
    return rc;
}

int main(int argc, char **argv)
{
    _cleanup_(rs_signerp) rs_signer *s = NULL;
    long n = argc > 3 ? strtol(argv[3], NULL, 10) : 1000;
    int threads = argc > 4 ? atoi(argv[4]) : 1;
    double t0, t1, t2, c1, c2;
    rs_error err;

    if (argc < 3 || n <= 0 || threads < 1 || threads > MAX_THREADS) {
        fprintf(stderr, "usage: bench_pkcs11_sign KEY CERT [N [THREADS]]\n");
        return 2;
    }
    t0 = now();
    if (rs_signer_open(argv[1], argv[2], &s, &err) < 0) {
        fprintf(stderr, "bench_pkcs11_sign: %s\n", err.msg);
        return 1;
    }
    t1 = now();
    c1 = cpu_now();
    if (sign_threads(s, n, threads, &err) < 0) {
        fprintf(stderr, "bench_pkcs11_sign: %s\n", err.msg);
        return 1;
    }
    t2 = now();
    c2 = cpu_now();
    /* open_s sign_s total_s signatures_per_second cpu_sign_s */
    printf("%.6f %.6f %.6f %.1f %.6f\n", t1 - t0, t2 - t1, t2 - t0, (double)n / (t2 - t1), c2 - c1);
    return 0;
}

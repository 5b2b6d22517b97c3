/* The former JSONL transparency log (translog/jsonl.h), for bench_tlog.sh
 * to compare with the tile log in the same run. Each command does what the
 * former CLI and service did:
 *   bench_tlog_jsonl build DIR N KEY CERT   N entries like bench_tlog.sh's,
 *                                           a signed head per 1,000
 *   bench_tlog_jsonl open DIR KEY CERT      what service start did with it
 *   bench_tlog_jsonl verify DIR CERT        log verify
 *   bench_tlog_jsonl prove DIR CERT INDEX   log prove (loads and checks all)
 *   bench_tlog_jsonl consistency DIR CERT OLD NEW */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/ossl.h"
#include "crypto/signer.h"
#include "translog/jsonl.h"

static int build(const char *dir, long n, const char *key, const char *cert, rs_error *err)
{
    rs_signer *signer = NULL;
    rs_jsonl *l = NULL;
    char digest[80];
    int rc = 0;

    if (rs_signer_open(key, cert, &signer, err) < 0 || rs_jsonl_create(dir, signer, &l, err) < 0)
        return -1;
    for (long i = 0; rc == 0 && i < n; i += 1000) {
        json_t *batch[1000];
        size_t k = 0;

        for (; k < 1000 && i + (long)k < n; k++) {
            snprintf(digest, sizeof(digest), "sha256:%064lx", (unsigned long)(i + (long)k) * 7919);
            batch[k] = json_pack("{s:s, s:I}", "d", digest, "i", (json_int_t)(i + (long)k));
        }
        rc = rs_jsonl_append(l, batch, k, NULL, err);
        for (size_t j = 0; j < k; j++)
            json_decref(batch[j]);
        if (rc == 0)
            rc = rs_jsonl_checkpoint(l, err);
    }
    rs_jsonl_close(l);
    rs_signer_free(signer);
    return rc;
}

static int check(const char *dir, const char *cert, rs_log_view *v, rs_error *err)
{
    X509 *pin = NULL;
    int rc;

    if (rs_load_cert(cert, &pin, err) < 0)
        return -1;
    rc = rs_log_verify(dir, pin, v, err);
    X509_free(pin);
    return rc;
}

int main(int argc, char **argv)
{
    rs_log_view v = { 0 };
    rs_hash_list proof = { 0 };
    rs_error err;
    int rc = -1;

    if (argc == 6 && !strcmp(argv[1], "build")) {
        rc = build(argv[2], atol(argv[3]), argv[4], argv[5], &err);
    } else if (argc == 5 && !strcmp(argv[1], "open")) {
        rs_signer *signer = NULL;
        rs_jsonl *l = NULL;

        rc = rs_signer_open(argv[3], argv[4], &signer, &err) < 0 ? -1 : rs_jsonl_open(argv[2], signer, &l, &err);
        if (l)
            rs_jsonl_close(l);
        if (signer)
            rs_signer_free(signer);
    } else if (argc == 4 && !strcmp(argv[1], "verify")) {
        rc = check(argv[2], argv[3], &v, &err);
    } else if (argc == 5 && !strcmp(argv[1], "prove")) {
        rc = check(argv[2], argv[3], &v, &err) < 0 ? -1
             : rs_merkle_inclusion_proof(v.leaves, v.heads[v.n_heads - 1].size, (size_t)atol(argv[4]), &proof, &err);
    } else if (argc == 6 && !strcmp(argv[1], "consistency")) {
        rc = check(argv[2], argv[3], &v, &err) < 0 ? -1
             : rs_merkle_consistency_proof(v.leaves, (size_t)atol(argv[4]), (size_t)atol(argv[5]), &proof, &err);
    } else {
        fprintf(stderr, "usage: see bench/bench_tlog_jsonl.c\n");
        return 2;
    }
    rs_hash_list_free(&proof);
    rs_log_view_free(&v);
    if (rc < 0)
        fprintf(stderr, "bench_tlog_jsonl: %s\n", err.msg);
    return rc < 0 ? 1 : 0;
}

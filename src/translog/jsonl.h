/* The FORMER transparency log format, kept to read old logs for
 * `log migrate` (translog/migrate.h) and to write them in tests and
 * benchmarks; the service writes the tile log (translog/log.h). An
 * append-only Merkle tree (RFC 9162 hashing) in a directory:
 *
 *   entries.jsonl   one entry per line, compact JSON with sorted keys; the
 *                   line's bytes (without the newline) are the leaf data
 *   heads.jsonl     one signed tree head per line: size, root, time, and
 *                   the leaf hashes it adds since the previous head
 *   log-cert.pem    the certificate of the key that signs the heads
 *
 * A head is signed over SHA-256 of its canonical JSON without the
 * "signature" member. A signature leaves the service only once its entry
 * is on disk; heads follow, at once when the log is idle and every 50 ms
 * under load (one head per batch would cost a signature per batch).
 * Entries a crash left without a head are covered by a new head when the
 * log is opened again; only an incomplete last line is dropped. */
#ifndef RS_JSONL_H
#define RS_JSONL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/cleanup.h"
#include "crypto/signer.h"
#include "translog/merkle.h"

typedef struct rs_jsonl rs_jsonl;

/* Opens the log in dir for appending: signer signs the heads and must
 * belong to log-cert.pem when it exists. */
int rs_jsonl_open(const char *dir, rs_signer *signer, rs_jsonl **out, rs_error *err);
/* The same, making dir first when missing. */
int rs_jsonl_create(const char *dir, rs_signer *signer, rs_jsonl **out, rs_error *err);
void rs_jsonl_close(rs_jsonl *l);
DEFINE_POINTER_CLEANUP(rs_jsonlp, rs_jsonl, rs_jsonl_close)

uint64_t rs_jsonl_size(rs_jsonl *l);
/* Whether an entry's "request" member already names id. */
bool rs_jsonl_has_request(rs_jsonl *l, const char *id);

/* Appends entries (JSON objects, borrowed) and returns once they are on
 * disk. Safe from many threads at once: callers that arrive during a
 * write are committed together by the next one. *first receives the
 * first entry's index. */
int rs_jsonl_append(rs_jsonl *l, json_t *const *entries, size_t n, uint64_t *first, rs_error *err);
/* Signs a head over every entry so far (when any is not yet covered). */
int rs_jsonl_checkpoint(rs_jsonl *l, rs_error *err);

/* ---- reading and checking a copy of the log ---- */

typedef struct rs_log_head {
    uint64_t size;
    rs_hash root;
    int64_t time;
} rs_log_head;

typedef struct rs_log_view {
    char **entries;          /* the leaf data, as text */
    rs_hash *leaves;
    size_t n_entries;
    rs_log_head *heads;
    size_t n_heads;
    X509 *cert;
} rs_log_view;

/* Reads the log in dir and checks everything: every entry is JSON, every
 * head is signed by log-cert.pem (or by pin, when given), lists exactly
 * the leaf hashes of the entries it adds and has the root of the tree of
 * that size, and every entry is covered by a head. Failures name the
 * entry or head. */
int rs_log_verify(const char *dir, X509 *pin, rs_log_view *out, rs_error *err);
void rs_log_view_free(rs_log_view *v);
/* The signed head of exactly that size, or NULL. */
const rs_log_head *rs_log_view_head(const rs_log_view *v, uint64_t size);

#endif

/* Inside the former JSONL log (jsonl.h), shared by the files that do one
 * job each:
 *   jsonl_common.c   reading lines, heads and the certificate;
 *   jsonl_open.c     opening a log for appending, recovering after a crash;
 *   jsonl_writer.c   appending entries and signing heads;
 *   jsonl_reader.c   reading and checking a copy of a log. */
#ifndef RS_JSONL_INTERNAL_H
#define RS_JSONL_INTERNAL_H

#include <openssl/sha.h>
#include <pthread.h>
#include <stdint.h>

#include "base/bytes.h"
#include "translog/jsonl.h"

/* Log files are read whole to check them; a log of this size holds tens
 * of millions of entries, far past what the format was used for. A 32-bit
 * address space has no room for 4 GiB: there, half of it. */
#if SIZE_MAX > UINT32_MAX
#define MAX_LOG_FILE ((size_t)1 << 32)
#else
#define MAX_LOG_FILE (SIZE_MAX / 2)
#endif
#define MAX_SIG 4096

/* Heads are signed by a thread of their own, this often when there is
 * something new, so signing them never holds up an append. */
#define HEAD_INTERVAL_NS (50 * 1000 * 1000LL)

typedef struct waiter {
    json_t *const *entries;
    size_t n;
    uint64_t first;
    bool done;
    int rc;
    rs_error err;
    struct waiter *next;
} waiter;

struct rs_jsonl {
    char *dir;
    int entries_fd, heads_fd;
    rs_signer *signer;
    rs_merkle_frontier tree;   /* every durable entry */
    uint64_t head_size;        /* entries the last head covers */
    json_t *unsigned_leaves;   /* leaf hashes of the entries after it */
    char **requests;           /* each entry's "request", or NULL */
    size_t n_requests;
    bool entries_broken;       /* a write failed half-way: reopen to recover */
    bool heads_broken;
    pthread_mutex_t mu;        /* the tree, the queue, the unsigned leaves */
    pthread_cond_t cv;
    bool committing;
    waiter *queue, **queue_tail;
    pthread_mutex_t head_mu;   /* one head writer at a time */
    pthread_t head_thread;
    bool head_thread_started, stopping;
    pthread_cond_t head_cv;    /* new entries after a head, or stopping */
};

typedef struct head_fields {
    uint64_t size, prev;
    rs_hash root;
    int64_t time;
    const json_t *added;
} head_fields;

int rs_jsonl_read_text(const char *dir, const char *name, bool may_be_missing, rs_bytes *out, rs_error *err);
/* The lines of buf (split in place); *complete is the length of the whole
 * lines, without an incomplete last one. */
int rs_jsonl_split_lines(rs_bytes *buf, char ***lines, size_t *n, size_t *complete, rs_error *err);
json_t *rs_jsonl_parse_object(const char *text);
int rs_jsonl_hex_hash(const json_t *v, rs_hash *out);
json_t *rs_jsonl_hash_json(const rs_hash *h);
int rs_jsonl_head_digest(const json_t *head, uint8_t out[SHA256_DIGEST_LENGTH], rs_error *err);
int rs_jsonl_verify_head_signature(const json_t *head, X509 *cert, rs_error *err);
int rs_jsonl_parse_head(const json_t *h, head_fields *f, rs_error *err);
X509 *rs_jsonl_read_cert_file(const char *dir, rs_error *err);

/* Notes an entry's "request" member, for rs_jsonl_has_request. */
int rs_jsonl_remember_request(rs_jsonl *l, const json_t *entry, rs_error *err);
/* Adds the leaf of line to tree and its hash to leaves. */
int rs_jsonl_add_leaf(json_t *leaves, const char *line, rs_merkle_frontier *tree, rs_error *err);
/* Signs and writes a head over every entry not yet covered. */
int rs_jsonl_write_head(rs_jsonl *l, rs_error *err);
/* The thread that writes heads every HEAD_INTERVAL_NS while there is news. */
void *rs_jsonl_head_loop(void *arg);

#endif

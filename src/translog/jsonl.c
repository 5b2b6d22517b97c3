#include "translog/jsonl.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "crypto/ossl.h"

#define MAX_LOG_FILE ((size_t)1 << 32)
#define MAX_SIG 4096

/* ---- shared by the writer and the verifier ---- */

static int read_text(const char *dir, const char *name, bool may_be_missing, rs_bytes *out, rs_error *err)
{
    _cleanup_free_ char *path = rs_path_join(dir, name);

    memset(out, 0, sizeof(*out));
    if (!path)
        return rs_fail(err, "out of memory");
    if (may_be_missing && access(path, F_OK) < 0 && errno == ENOENT)
        return 0;
    if (rs_read_file(path, MAX_LOG_FILE, out, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

/* Splits buf into lines in place. *complete is the length covered by
 * newline-terminated lines; a trailing fragment is not returned. */
static int split_lines(rs_bytes *buf, char ***lines, size_t *n, size_t *complete, rs_error *err)
{
    size_t start = 0, cap = 0;

    *lines = NULL;
    *n = 0;
    for (size_t i = 0; i < buf->len; i++) {
        /* A NUL would let a line's text differ from its bytes. */
        if (buf->data[i] == '\0')
            return rs_fail(err, "line %zu contains a NUL byte", *n + 1);
        if (buf->data[i] != '\n')
            continue;
        if (*n == cap) {
            char **grown = realloc(*lines, (cap = cap ? 2 * cap : 64) * sizeof(char *));

            if (!grown)
                return rs_fail(err, "out of memory");
            *lines = grown;
        }
        buf->data[i] = '\0';
        (*lines)[(*n)++] = (char *)buf->data + start;
        start = i + 1;
    }
    *complete = start;
    return 0;
}

static json_t *parse_object(const char *text)
{
    json_t *v = json_loads(text, JSON_REJECT_DUPLICATES, NULL);

    if (v && !json_is_object(v)) {
        json_decref(v);
        return NULL;
    }
    return v;
}

static int hex_hash(const json_t *v, rs_hash *out)
{
    const char *s = json_string_value(v);

    return s && strlen(s) == 2 * RS_HASH_LEN && rs_unhex(s, out->b, RS_HASH_LEN) == 0 ? 0 : -1;
}

static json_t *hash_json(const rs_hash *h)
{
    char hex[2 * RS_HASH_LEN + 1];

    rs_hex(h->b, RS_HASH_LEN, hex);
    return json_string(hex);
}

/* What a head's signature covers: its canonical text without "signature". */
static int head_digest(const json_t *head, uint8_t out[SHA256_DIGEST_LENGTH], rs_error *err)
{
    json_auto_t *body = json_deep_copy(head);
    _cleanup_free_ char *text = NULL;

    if (!body || (json_object_del(body, "signature"), !(text = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS))))
        return rs_fail(err, "out of memory");
    rs_sha256((const uint8_t *)text, strlen(text), out);
    return 0;
}

static int verify_head_signature(const json_t *head, X509 *cert, rs_error *err)
{
    const char *b64 = json_string_value(json_object_get(head, "signature"));
    _cleanup_bytes_ rs_bytes sig = { 0 };
    uint8_t digest[SHA256_DIGEST_LENGTH];

    if (!b64 || !*b64)
        return rs_fail(err, "no signature");
    if (rs_base64_decode(b64, MAX_SIG, &sig, err) < 0)
        return rs_fail(err, "the signature is not base64");
    if (head_digest(head, digest, err) < 0)
        return -1;
    if (rs_verify_digest(X509_get0_pubkey(cert), EVP_sha256(), digest, sizeof(digest), sig.data, sig.len, err) < 0)
        return rs_fail(err, "the signature does not verify with the log certificate");
    return 0;
}

typedef struct head_fields {
    uint64_t size, prev;
    rs_hash root;
    int64_t time;
    const json_t *added;
} head_fields;

static int parse_head(const json_t *h, head_fields *f, rs_error *err)
{
    const json_t *size = json_object_get(h, "size"), *prev = json_object_get(h, "prev_size");
    const char *hash = json_string_value(json_object_get(h, "hash"));

    if (!json_is_integer(size) || !json_is_integer(prev) || json_integer_value(size) < 0 ||
        json_integer_value(prev) < 0 || !json_is_integer(json_object_get(h, "time")))
        return rs_fail(err, "size, prev_size or time missing");
    f->size = (uint64_t)json_integer_value(size);
    f->prev = (uint64_t)json_integer_value(prev);
    f->time = json_integer_value(json_object_get(h, "time"));
    f->added = json_object_get(h, "added");
    if (!hash || strcmp(hash, "sha256") != 0)
        return rs_fail(err, "hash is not sha256");
    if (hex_hash(json_object_get(h, "root"), &f->root) < 0)
        return rs_fail(err, "root is not a SHA-256 hash");
    if (f->prev >= f->size || !json_is_array(f->added) || json_array_size(f->added) != f->size - f->prev)
        return rs_fail(err, "it must add prev_size..size-1 and list their leaf hashes");
    return 0;
}

static X509 *read_cert_file(const char *dir, rs_error *err)
{
    _cleanup_free_ char *path = rs_path_join(dir, "log-cert.pem");
    X509 *cert = NULL;

    if (!path) {
        rs_fail(err, "out of memory");
        return NULL;
    }
    if (rs_load_cert(path, &cert, err) < 0)
        rs_error_prefix(err, "%s", path);
    return cert;
}

/* ---- the writer ---- */

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

static int remember_request(rs_jsonl *l, const json_t *entry, rs_error *err)
{
    const char *id = json_string_value(json_object_get(entry, "request"));
    char **grown = realloc(l->requests, (l->n_requests + 1) * sizeof(char *));

    if (!grown)
        return rs_fail(err, "out of memory");
    l->requests = grown;
    l->requests[l->n_requests] = id ? strdup(id) : NULL;
    if (id && !l->requests[l->n_requests])
        return rs_fail(err, "out of memory");
    l->n_requests++;
    return 0;
}

static int write_cert(rs_jsonl *l, rs_error *err)
{
    _cleanup_free_ char *path = rs_path_join(l->dir, "log-cert.pem");
    _cleanup_(rs_biop) BIO *mem = BIO_new(BIO_s_mem());
    _cleanup_(rs_x509p) X509 *existing = NULL;
    char *pem;
    long len;

    if (!path || !mem)
        return rs_fail(err, "out of memory");
    if (access(path, F_OK) == 0) {
        if (!(existing = read_cert_file(l->dir, err)))
            return -1;
        if (X509_cmp(existing, l->signer->cert) != 0)
            return rs_fail(err, "%s: the log is signed by another certificate than the configured log key's", path);
        return 0;
    }
    if (!PEM_write_bio_X509(mem, l->signer->cert) || (len = BIO_get_mem_data(mem, &pem)) <= 0)
        return rs_fail_ssl(err, "cannot encode the log certificate");
    return rs_write_file(path, pem, (size_t)len, 0644, err);
}

static int open_append(rs_jsonl *l, const char *name, off_t keep, int *fd, rs_error *err)
{
    _cleanup_free_ char *path = rs_path_join(l->dir, name);

    if (!path)
        return rs_fail(err, "out of memory");
    *fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (*fd < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    /* Whatever follows the last complete line is an interrupted write. */
    if (ftruncate(*fd, keep) < 0 || fsync(*fd) < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    return 0;
}

static int add_leaf(json_t *leaves, const char *line, rs_merkle_frontier *tree, rs_error *err)
{
    rs_hash leaf;

    if (rs_merkle_leaf(line, strlen(line), &leaf, err) < 0)
        return -1;
    if (json_array_append_new(leaves, hash_json(&leaf)) < 0)
        return rs_fail(err, "out of memory");
    rs_merkle_frontier_push(tree, &leaf);
    return 0;
}

/* Loads the durable state: every complete entry (those after the last
 * head were written and synced, and their signatures may have left: they
 * stay, and the next head covers them) and the heads, checking the root
 * the last head signed. */
static int recover(rs_jsonl *l, rs_error *err)
{
    _cleanup_bytes_ rs_bytes eb = { 0 }, hb = { 0 };
    _cleanup_free_ char **elines = NULL, **hlines = NULL;
    size_t ne = 0, nh = 0, ecomplete, hcomplete;
    head_fields last = { 0 };
    rs_hash root;

    if (read_text(l->dir, "entries.jsonl", true, &eb, err) < 0 || read_text(l->dir, "heads.jsonl", true, &hb, err) < 0 ||
        split_lines(&eb, &elines, &ne, &ecomplete, err) < 0 || split_lines(&hb, &hlines, &nh, &hcomplete, err) < 0)
        return -1;
    if (nh > 0) {
        json_auto_t *h = parse_object(hlines[nh - 1]);

        if (!h || parse_head(h, &last, err) < 0)
            return rs_fail(err, "%s/heads.jsonl: the last head is unreadable; run 'reprosign log verify'", l->dir);
    }
    if (last.size > ne)
        return rs_fail(err, "%s: the last head covers %llu entries but only %zu exist", l->dir,
                       (unsigned long long)last.size, ne);
    for (size_t i = 0; i < ne; i++) {
        json_auto_t *e = parse_object(elines[i]);

        if (!e)
            return rs_fail(err, "%s/entries.jsonl: entry %zu is not a JSON object", l->dir, i);
        if (add_leaf(l->unsigned_leaves, elines[i], &l->tree, err) < 0 || remember_request(l, e, err) < 0)
            return -1;
        if (i + 1 == last.size) {
            rs_merkle_frontier_root(&l->tree, &root);
            if (memcmp(root.b, last.root.b, RS_HASH_LEN) != 0)
                return rs_fail(err, "%s: the entries do not match the last signed tree head; run 'reprosign log verify'",
                               l->dir);
            json_array_clear(l->unsigned_leaves);
        }
    }
    l->head_size = last.size;
    if (open_append(l, "entries.jsonl", (off_t)ecomplete, &l->entries_fd, err) < 0 ||
        open_append(l, "heads.jsonl", (off_t)hcomplete, &l->heads_fd, err) < 0)
        return -1;
    return 0;
}

static int persist(bool *broken, int fd, const char *text, size_t len, rs_error *err)
{
    if (*broken)
        return rs_fail(err, "the transparency log is in an unknown state after a failed write; restart the service");
    *broken = true;
    if (rs_write_all(fd, text, len) < 0)
        return rs_fail(err, "cannot write to the log: %s", strerror(errno));
    if (fdatasync(fd) < 0)
        return rs_fail(err, "cannot write to the log: %s", strerror(errno));
    *broken = false;
    return 0;
}

static int sign_head(rs_jsonl *l, json_t *head, rs_error *err)
{
    uint8_t digest[SHA256_DIGEST_LENGTH];
    _cleanup_bytes_ rs_bytes sig = { 0 };
    _cleanup_free_ char *b64 = NULL;

    if (head_digest(head, digest, err) < 0 ||
        rs_signer_sign_digest(l->signer, EVP_sha256(), digest, sizeof(digest), &sig, err) < 0)
        return rs_error_prefix(err, "cannot sign the tree head");
    if (!(b64 = rs_base64_encode(sig.data, sig.len)))
        return rs_fail(err, "out of memory");
    return json_object_set_new(head, "signature", json_string(b64)) == 0 ? 0 : rs_fail(err, "out of memory");
}

/* Signs and writes a head over every entry so far, from a snapshot, so
 * appends go on meanwhile. */
static int write_head_locked(rs_jsonl *l, rs_error *err)
{
    json_auto_t *head = NULL, *added = NULL, *rest = NULL;
    _cleanup_free_ char *line = NULL;
    char *grown;
    rs_merkle_frontier tree;
    uint64_t prev;
    rs_hash root;
    size_t n;

    pthread_mutex_lock(&l->mu);
    tree = l->tree;
    prev = l->head_size;
    added = json_deep_copy(l->unsigned_leaves);
    pthread_mutex_unlock(&l->mu);
    if (!added)
        return rs_fail(err, "out of memory");
    if (tree.size == prev)
        return 0;
    n = json_array_size(added);
    rs_merkle_frontier_root(&tree, &root);
    head = json_pack("{s:I, s:I, s:o, s:I, s:s, s:O}", "size", (json_int_t)tree.size, "prev_size", (json_int_t)prev,
                     "root", hash_json(&root), "time", (json_int_t)time(NULL), "hash", "sha256", "added", added);
    if (!head)
        return rs_fail(err, "out of memory");
    if (sign_head(l, head, err) < 0)
        return -1;
    if (!(line = json_dumps(head, JSON_COMPACT | JSON_SORT_KEYS)) || !(grown = realloc(line, strlen(line) + 2)))
        return rs_fail(err, "out of memory");
    line = grown;
    strcat(line, "\n");
    if (persist(&l->heads_broken, l->heads_fd, line, strlen(line), err) < 0)
        return -1;
    pthread_mutex_lock(&l->mu);
    l->head_size = tree.size;
    rest = json_array();
    for (size_t i = n; rest && i < json_array_size(l->unsigned_leaves); i++)
        json_array_append(rest, json_array_get(l->unsigned_leaves, i));
    if (rest) {
        json_decref(l->unsigned_leaves);
        l->unsigned_leaves = TAKE_PTR(rest);
    }
    pthread_mutex_unlock(&l->mu);
    return 0;
}

static int write_head(rs_jsonl *l, rs_error *err)
{
    int rc;

    pthread_mutex_lock(&l->head_mu);
    rc = write_head_locked(l, err);
    pthread_mutex_unlock(&l->head_mu);
    return rc;
}

static void *head_loop(void *arg)
{
    rs_jsonl *l = arg;
    rs_error err;

    pthread_mutex_lock(&l->mu);
    while (!l->stopping) {
        struct timespec until;

        /* An idle service sleeps until entries come. */
        if (l->tree.size == l->head_size) {
            pthread_cond_wait(&l->head_cv, &l->mu);
            continue;
        }

        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += HEAD_INTERVAL_NS;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&l->head_cv, &l->mu, &until);
        pthread_mutex_unlock(&l->mu);
        write_head(l, &err);   /* a failure marks the heads broken; checkpoints report it */
        pthread_mutex_lock(&l->mu);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

/* Writes a batch's entries and waits for the disk: from then on they are
 * part of the log, whatever happens to the process. */
static int commit_entries(rs_jsonl *l, waiter *batch, rs_error *err)
{
    rs_merkle_frontier tree = l->tree;
    _cleanup_bytes_ rs_bytes text = { 0 };
    json_auto_t *fresh = json_array();

    if (!fresh)
        return rs_fail(err, "out of memory");
    for (waiter *w = batch; w; w = w->next) {
        w->first = tree.size;
        for (size_t i = 0; i < w->n; i++) {
            _cleanup_free_ char *line = json_dumps(w->entries[i], JSON_COMPACT | JSON_SORT_KEYS);

            if (!line || !json_is_object(w->entries[i]))
                return rs_fail(err, "a log entry must be a JSON object");
            if (add_leaf(fresh, line, &tree, err) < 0 || rs_bytes_append(&text, line, strlen(line), err) < 0 ||
                rs_bytes_append(&text, "\n", 1, err) < 0)
                return -1;
        }
    }
    if (text.len && persist(&l->entries_broken, l->entries_fd, (char *)text.data, text.len, err) < 0)
        return -1;
    for (waiter *w = batch; w; w = w->next)
        for (size_t i = 0; i < w->n; i++)
            if (remember_request(l, w->entries[i], err) < 0)
                return -1;
    pthread_mutex_lock(&l->mu);
    /* The first entries after a head wake the head thread; later ones
     * find it awake, waiting out the interval. */
    if (l->tree.size == l->head_size)
        pthread_cond_signal(&l->head_cv);
    l->tree = tree;
    json_array_extend(l->unsigned_leaves, fresh);
    pthread_mutex_unlock(&l->mu);
    return 0;
}

static void finish_batch(rs_jsonl *l, waiter *batch, int rc, const rs_error *err)
{
    for (waiter *w = batch, *next; w; w = next) {
        next = w->next;
        w->rc = rc;
        w->err = *err;
        w->done = true;
    }
    pthread_cond_broadcast(&l->cv);
}

/* Called with mu held and committing set: commits what is queued and
 * releases its callers. */
static void lead(rs_jsonl *l)
{
    waiter *batch = l->queue;
    rs_error err = { 0 };
    int rc;

    l->queue = NULL;
    l->queue_tail = &l->queue;
    pthread_mutex_unlock(&l->mu);
    rc = commit_entries(l, batch, &err);
    pthread_mutex_lock(&l->mu);
    finish_batch(l, batch, rc, &err);
}

int rs_jsonl_append(rs_jsonl *l, json_t *const *entries, size_t n, uint64_t *first, rs_error *err)
{
    waiter me = { .entries = entries, .n = n };

    pthread_mutex_lock(&l->mu);
    *l->queue_tail = &me;
    l->queue_tail = &me.next;
    while (!me.done) {
        if (l->committing) {
            pthread_cond_wait(&l->cv, &l->mu);
            continue;
        }
        l->committing = true;
        lead(l);
        l->committing = false;
        pthread_cond_broadcast(&l->cv);
    }
    pthread_mutex_unlock(&l->mu);
    if (me.rc < 0) {
        *err = me.err;
        return -1;
    }
    if (first)
        *first = me.first;
    return 0;
}

int rs_jsonl_checkpoint(rs_jsonl *l, rs_error *err)
{
    return write_head(l, err);
}

int rs_jsonl_open(const char *dir, rs_signer *signer, bool create, rs_jsonl **out, rs_error *err)
{
    _cleanup_(rs_jsonlp) rs_jsonl *l = calloc(1, sizeof(*l));

    *out = NULL;
    if (!l || !(l->dir = strdup(dir)) || !(l->unsigned_leaves = json_array()))
        return rs_fail(err, "out of memory");
    l->entries_fd = l->heads_fd = -1;
    l->signer = signer;
    l->queue_tail = &l->queue;
    pthread_mutex_init(&l->mu, NULL);
    pthread_mutex_init(&l->head_mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    pthread_cond_init(&l->head_cv, NULL);
    if (create && mkdir(dir, 0755) < 0 && errno != EEXIST)
        return rs_fail(err, "%s: %s", dir, strerror(errno));
    if (write_cert(l, err) < 0 || recover(l, err) < 0 || write_head(l, err) < 0)
        return rs_error_prefix(err, "transparency log");
    if (pthread_create(&l->head_thread, NULL, head_loop, l) != 0)
        return rs_fail(err, "cannot start the transparency log's thread");
    l->head_thread_started = true;
    *out = TAKE_PTR(l);
    return 0;
}

void rs_jsonl_close(rs_jsonl *l)
{
    if (l->head_thread_started) {
        rs_error err;

        pthread_mutex_lock(&l->mu);
        l->stopping = true;
        pthread_cond_signal(&l->head_cv);
        pthread_mutex_unlock(&l->mu);
        pthread_join(l->head_thread, NULL);
        /* Whatever the thread had not covered yet: a closed log ends on a
         * head over all of it (a failure leaves that to the next open). */
        write_head(l, &err);
    }
    if (l->entries_fd >= 0)
        close(l->entries_fd);
    if (l->heads_fd >= 0)
        close(l->heads_fd);
    for (size_t i = 0; i < l->n_requests; i++)
        free(l->requests[i]);
    free(l->requests);
    json_decref(l->unsigned_leaves);
    free(l->dir);
    pthread_mutex_destroy(&l->mu);
    pthread_mutex_destroy(&l->head_mu);
    pthread_cond_destroy(&l->cv);
    pthread_cond_destroy(&l->head_cv);
    free(l);
}

uint64_t rs_jsonl_size(rs_jsonl *l)
{
    uint64_t n;

    pthread_mutex_lock(&l->mu);
    n = l->tree.size;
    pthread_mutex_unlock(&l->mu);
    return n;
}

bool rs_jsonl_has_request(rs_jsonl *l, const char *id)
{
    bool found = false;

    pthread_mutex_lock(&l->mu);
    for (size_t i = 0; !found && i < l->n_requests; i++)
        found = l->requests[i] && !strcmp(l->requests[i], id);
    pthread_mutex_unlock(&l->mu);
    return found;
}

/* ---- the verifier ---- */

void rs_log_view_free(rs_log_view *v)
{
    for (size_t i = 0; i < v->n_entries; i++)
        free(v->entries[i]);
    free(v->entries);
    free(v->leaves);
    free(v->heads);
    X509_free(v->cert);
    memset(v, 0, sizeof(*v));
}

const rs_log_head *rs_log_view_head(const rs_log_view *v, uint64_t size)
{
    for (size_t i = 0; i < v->n_heads; i++)
        if (v->heads[i].size == size)
            return &v->heads[i];
    return NULL;
}

static int load_entries(const char *dir, rs_log_view *v, rs_error *err)
{
    _cleanup_bytes_ rs_bytes buf = { 0 };
    _cleanup_free_ char **lines = NULL;
    size_t n, complete;

    if (read_text(dir, "entries.jsonl", true, &buf, err) < 0 || split_lines(&buf, &lines, &n, &complete, err) < 0)
        return -1;
    if (complete != buf.len)
        return rs_fail(err, "entry %zu is cut short (no newline)", n);
    v->entries = calloc(n ? n : 1, sizeof(char *));
    v->leaves = calloc(n ? n : 1, sizeof(rs_hash));
    if (!v->entries || !v->leaves)
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_auto_t *e = parse_object(lines[i]);

        if (!(v->entries[i] = strdup(lines[i])))
            return rs_fail(err, "out of memory");
        v->n_entries = i + 1;
        if (!e)
            return rs_fail(err, "entry %zu is not a JSON object", i);
        if (rs_merkle_leaf(lines[i], strlen(lines[i]), &v->leaves[i], err) < 0)
            return -1;
    }
    return 0;
}

static int check_head(rs_log_view *v, size_t j, const json_t *h, rs_merkle_frontier *tree, rs_error *err)
{
    uint64_t prev = j ? v->heads[j - 1].size : 0;
    head_fields f;
    rs_hash root;

    if (parse_head(h, &f, err) < 0 || verify_head_signature(h, v->cert, err) < 0)
        return -1;
    if (f.prev != prev)
        return rs_fail(err, "prev_size is %llu, but the previous head has size %llu", (unsigned long long)f.prev,
                       (unsigned long long)prev);
    if (f.size > v->n_entries)
        return rs_fail(err, "it covers %llu entries, but the log has only %zu", (unsigned long long)f.size,
                       v->n_entries);
    for (uint64_t i = f.prev; i < f.size; i++) {
        rs_hash signed_leaf;

        if (hex_hash(json_array_get(f.added, i - f.prev), &signed_leaf) < 0)
            return rs_fail(err, "added[%llu] is not a hash", (unsigned long long)(i - f.prev));
        if (memcmp(signed_leaf.b, v->leaves[i].b, RS_HASH_LEN) != 0)
            return rs_fail(err, "entry %llu has been altered: it is not the entry this head signed: %s",
                           (unsigned long long)i, v->entries[i]);
        rs_merkle_frontier_push(tree, &v->leaves[i]);
    }
    rs_merkle_frontier_root(tree, &root);
    if (memcmp(root.b, f.root.b, RS_HASH_LEN) != 0)
        return rs_fail(err, "its root is not the root of the first %llu entries", (unsigned long long)f.size);
    v->heads[j] = (rs_log_head){ .size = f.size, .root = f.root, .time = f.time };
    return 0;
}

static int load_heads(const char *dir, rs_log_view *v, rs_error *err)
{
    _cleanup_bytes_ rs_bytes buf = { 0 };
    _cleanup_free_ char **lines = NULL;
    rs_merkle_frontier tree = { 0 };
    size_t n, complete;

    if (read_text(dir, "heads.jsonl", false, &buf, err) < 0 || split_lines(&buf, &lines, &n, &complete, err) < 0)
        return -1;
    if (complete != buf.len)
        return rs_fail(err, "head %zu is cut short (no newline)", n);
    if (!(v->heads = calloc(n ? n : 1, sizeof(*v->heads))))
        return rs_fail(err, "out of memory");
    for (size_t j = 0; j < n; j++) {
        json_auto_t *h = parse_object(lines[j]);

        if (!h)
            return rs_fail(err, "head %zu is not a JSON object", j);
        if (check_head(v, j, h, &tree, err) < 0)
            return rs_error_prefix(err, "head %zu", j);
        v->n_heads = j + 1;
    }
    return 0;
}

int rs_log_verify(const char *dir, X509 *pin, rs_log_view *out, rs_error *err)
{
    rs_log_view v = { 0 };
    uint64_t covered;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (!(v.cert = read_cert_file(dir, err)))
        goto done;
    if (pin && X509_cmp(pin, v.cert) != 0) {
        rs_fail(err, "%s/log-cert.pem is not the expected log certificate", dir);
        goto done;
    }
    if (load_entries(dir, &v, err) < 0 || load_heads(dir, &v, err) < 0) {
        rs_error_prefix(err, "%s", dir);
        goto done;
    }
    covered = v.n_heads ? v.heads[v.n_heads - 1].size : 0;
    if (covered < v.n_entries) {
        rs_fail(err, "%s: entries %llu to %zu are not covered by a signed tree head", dir,
                (unsigned long long)covered, v.n_entries - 1);
        goto done;
    }
    *out = v;
    memset(&v, 0, sizeof(v));
    rc = 0;
done:
    rs_log_view_free(&v);
    return rc;
}

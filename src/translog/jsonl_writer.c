#include "translog/jsonl_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "crypto/ossl.h"

int rs_jsonl_remember_request(rs_jsonl *l, const json_t *entry, rs_error *err)
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

int rs_jsonl_add_leaf(json_t *leaves, const char *line, rs_merkle_frontier *tree, rs_error *err)
{
    rs_hash leaf;

    if (rs_merkle_leaf(line, strlen(line), &leaf, err) < 0)
        return -1;
    if (json_array_append_new(leaves, rs_jsonl_hash_json(&leaf)) < 0)
        return rs_fail(err, "out of memory");
    rs_merkle_frontier_push(tree, &leaf);
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

    if (rs_jsonl_head_digest(head, digest, err) < 0 ||
        rs_signer_sign_digest(l->signer, EVP_sha256(), digest, sizeof(digest), &sig, err) < 0)
        return rs_error_prefix(err, "cannot sign the tree head");
    if (!(b64 = rs_base64_encode(sig.data, sig.len)))
        return rs_fail(err, "out of memory");
    return json_object_set_new(head, "signature", json_string(b64)) == 0 ? 0 : rs_fail(err, "out of memory");
}

/* Signs and writes a head over every entry so far, from a snapshot, so
 * appends go on meanwhile. */
/* The signed head line (with its newline) over tree, adding the leaves
 * after prev. */
static char *head_line(rs_jsonl *l, const rs_merkle_frontier *tree, uint64_t prev, json_t *added, rs_error *err)
{
    json_auto_t *head = NULL;
    char *line, *grown;
    rs_hash root;

    rs_merkle_frontier_root(tree, &root);
    head = json_pack("{s:I, s:I, s:o, s:I, s:s, s:O}", "size", (json_int_t)tree->size, "prev_size", (json_int_t)prev,
                     "root", rs_jsonl_hash_json(&root), "time", (json_int_t)time(NULL), "hash", "sha256", "added", added);
    if (!head) {
        rs_fail(err, "out of memory");
        return NULL;
    }
    if (sign_head(l, head, err) < 0)
        return NULL;
    if (!(line = json_dumps(head, JSON_COMPACT | JSON_SORT_KEYS)) || !(grown = realloc(line, strlen(line) + 2))) {
        free(line);
        rs_fail(err, "out of memory");
        return NULL;
    }
    return strcat(grown, "\n");
}

/* The head now covers tree.size entries: its first n unsigned leaves go. */
static void drop_signed_leaves(rs_jsonl *l, uint64_t size, size_t n)
{
    json_t *rest;

    pthread_mutex_lock(&l->mu);
    l->head_size = size;
    rest = json_array();
    for (size_t i = n; rest && i < json_array_size(l->unsigned_leaves); i++)
        json_array_append(rest, json_array_get(l->unsigned_leaves, i));
    if (rest) {
        json_decref(l->unsigned_leaves);
        l->unsigned_leaves = rest;
    }
    pthread_mutex_unlock(&l->mu);
}

static int write_head_locked(rs_jsonl *l, rs_error *err)
{
    json_auto_t *added = NULL;
    _cleanup_free_ char *line = NULL;
    rs_merkle_frontier tree;
    uint64_t prev;

    pthread_mutex_lock(&l->mu);
    tree = l->tree;
    prev = l->head_size;
    added = json_deep_copy(l->unsigned_leaves);
    pthread_mutex_unlock(&l->mu);
    if (!added)
        return rs_fail(err, "out of memory");
    if (tree.size == prev)
        return 0;
    if (!(line = head_line(l, &tree, prev, added, err)) ||
        persist(&l->heads_broken, l->heads_fd, line, strlen(line), err) < 0)
        return -1;
    drop_signed_leaves(l, tree.size, json_array_size(added));
    return 0;
}

int rs_jsonl_write_head(rs_jsonl *l, rs_error *err)
{
    int rc;

    pthread_mutex_lock(&l->head_mu);
    rc = write_head_locked(l, err);
    pthread_mutex_unlock(&l->head_mu);
    return rc;
}

void *rs_jsonl_head_loop(void *arg)
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
        rs_jsonl_write_head(l, &err);   /* a failure marks the heads broken; checkpoints report it */
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
            if (rs_jsonl_add_leaf(fresh, line, &tree, err) < 0 || rs_bytes_append(&text, line, strlen(line), err) < 0 ||
                rs_bytes_append(&text, "\n", 1, err) < 0)
                return -1;
        }
    }
    if (text.len && persist(&l->entries_broken, l->entries_fd, (char *)text.data, text.len, err) < 0)
        return -1;
    for (waiter *w = batch; w; w = w->next)
        for (size_t i = 0; i < w->n; i++)
            if (rs_jsonl_remember_request(l, w->entries[i], err) < 0)
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
    return rs_jsonl_write_head(l, err);
}

#include "translog/jsonl_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/pem.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "crypto/ossl.h"

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
        if (!(existing = rs_jsonl_read_cert_file(l->dir, err)))
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

    if (rs_jsonl_read_text(l->dir, "entries.jsonl", true, &eb, err) < 0 || rs_jsonl_read_text(l->dir, "heads.jsonl", true, &hb, err) < 0 ||
        rs_jsonl_split_lines(&eb, &elines, &ne, &ecomplete, err) < 0 || rs_jsonl_split_lines(&hb, &hlines, &nh, &hcomplete, err) < 0)
        return -1;
    if (nh > 0) {
        json_auto_t *h = rs_jsonl_parse_object(hlines[nh - 1]);

        if (!h || rs_jsonl_parse_head(h, &last, err) < 0)
            return rs_fail(err, "%s/heads.jsonl: the last head is unreadable; run 'reprosign log verify'", l->dir);
    }
    if (last.size > ne)
        return rs_fail(err, "%s: the last head covers %llu entries but only %zu exist", l->dir,
                       (unsigned long long)last.size, ne);
    for (size_t i = 0; i < ne; i++) {
        json_auto_t *e = rs_jsonl_parse_object(elines[i]);

        if (!e)
            return rs_fail(err, "%s/entries.jsonl: entry %zu is not a JSON object", l->dir, i);
        if (rs_jsonl_add_leaf(l->unsigned_leaves, elines[i], &l->tree, err) < 0 || rs_jsonl_remember_request(l, e, err) < 0)
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

/* Whether opening a log may make its directory. */
typedef enum { OPEN_EXISTING, OPEN_OR_CREATE } open_mode;

static int open_log(const char *dir, rs_signer *signer, open_mode mode, rs_jsonl **out, rs_error *err)
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
    if (mode == OPEN_OR_CREATE && mkdir(dir, 0755) < 0 && errno != EEXIST)
        return rs_fail(err, "%s: %s", dir, strerror(errno));
    if (write_cert(l, err) < 0 || recover(l, err) < 0 || rs_jsonl_write_head(l, err) < 0)
        return rs_error_prefix(err, "transparency log");
    if (pthread_create(&l->head_thread, NULL, rs_jsonl_head_loop, l) != 0)
        return rs_fail(err, "cannot start the transparency log's thread");
    l->head_thread_started = true;
    *out = TAKE_PTR(l);
    return 0;
}

int rs_jsonl_create(const char *dir, rs_signer *signer, rs_jsonl **out, rs_error *err)
{
    return open_log(dir, signer, OPEN_OR_CREATE, out, err);
}

int rs_jsonl_open(const char *dir, rs_signer *signer, rs_jsonl **out, rs_error *err)
{
    return open_log(dir, signer, OPEN_EXISTING, out, err);
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
        rs_jsonl_write_head(l, &err);
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

#include "translog/jsonl_internal.h"

#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "crypto/ossl.h"

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

    if (rs_jsonl_read_text(dir, "entries.jsonl", true, &buf, err) < 0 || rs_jsonl_split_lines(&buf, &lines, &n, &complete, err) < 0)
        return -1;
    if (complete != buf.len)
        return rs_fail(err, "entry %zu is cut short (no newline)", n);
    v->entries = calloc(n ? n : 1, sizeof(char *));
    v->leaves = calloc(n ? n : 1, sizeof(rs_hash));
    if (!v->entries || !v->leaves)
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_auto_t *e = rs_jsonl_parse_object(lines[i]);

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

    if (rs_jsonl_parse_head(h, &f, err) < 0 || rs_jsonl_verify_head_signature(h, v->cert, err) < 0)
        return -1;
    if (f.prev != prev)
        return rs_fail(err, "prev_size is %llu, but the previous head has size %llu", (unsigned long long)f.prev,
                       (unsigned long long)prev);
    if (f.size > v->n_entries)
        return rs_fail(err, "it covers %llu entries, but the log has only %zu", (unsigned long long)f.size,
                       v->n_entries);
    for (uint64_t i = f.prev; i < f.size; i++) {
        rs_hash signed_leaf;

        if (rs_jsonl_hex_hash(json_array_get(f.added, i - f.prev), &signed_leaf) < 0)
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

    if (rs_jsonl_read_text(dir, "heads.jsonl", false, &buf, err) < 0 || rs_jsonl_split_lines(&buf, &lines, &n, &complete, err) < 0)
        return -1;
    if (complete != buf.len)
        return rs_fail(err, "head %zu is cut short (no newline)", n);
    if (!(v->heads = calloc(n ? n : 1, sizeof(*v->heads))))
        return rs_fail(err, "out of memory");
    for (size_t j = 0; j < n; j++) {
        json_auto_t *h = rs_jsonl_parse_object(lines[j]);

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
    if (!(v.cert = rs_jsonl_read_cert_file(dir, err)))
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

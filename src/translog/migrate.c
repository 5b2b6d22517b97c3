#include "translog/migrate.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "crypto/ossl.h"
#include "translog/jsonl.h"
#include "translog/log.h"

static int migrate(const char *old_dir, const char *cert_path, const char *new_dir, const char *key_path,
                   uint64_t *entries, uint64_t *heads, rs_error *err)
{
    _cleanup_(rs_x509p) X509 *pin = NULL;
    _cleanup_(rs_log_view_free) rs_log_view v = { 0 };
    _cleanup_(rs_translogp) rs_translog *l = NULL;
    size_t done = 0;

    if (rs_load_cert(cert_path, &pin, err) < 0 || rs_log_verify(old_dir, pin, &v, err) < 0 ||
        rs_translog_create(new_dir, key_path, &l, err) < 0)
        return -1;
    for (size_t h = 0; h < v.n_heads; h++) {
        const rs_log_head *head = &v.heads[h];
        rs_hash root;

        if (head->size < done)
            return rs_fail(err, "%s: head %zu shrinks the log", old_dir, h + 1);
        if (rs_translog_append_raw(l, v.entries + done, head->size - done, NULL, err) < 0)
            return -1;
        done = head->size;
        rs_translog_root(l, &root);
        if (memcmp(&root, &head->root, sizeof(root)))
            return rs_fail(err, "%s: the new tree of %zu entries does not reproduce the root of head %zu", new_dir,
                           done, h + 1);
    }
    if (done != v.n_entries)
        return rs_fail(err, "%s: %zu entries are covered by no signed head", old_dir, v.n_entries - done);
    *entries = done;
    *heads = v.n_heads;
    return 0;
}

int rs_log_migrate(const char *old_dir, const char *cert_path, const char *new_dir, const char *key_path,
                   uint64_t *entries, uint64_t *heads, rs_error *err)
{
    struct stat st;

    *entries = *heads = 0;
    if (stat(new_dir, &st) == 0 || errno != ENOENT)
        return rs_fail(err, "%s: already exists; migrate makes a new log", new_dir);
    if (migrate(old_dir, cert_path, new_dir, key_path, entries, heads, err) < 0) {
        rs_remove_tree(new_dir);   /* a failed migration leaves nothing */
        return -1;
    }
    return 0;
}

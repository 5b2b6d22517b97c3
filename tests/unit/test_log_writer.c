/* The tile log's writer (translog/log.c, log_open.c): a new log is empty
 * and signed; appends number their entries in order, from one thread or
 * many, and their root is the Merkle root of every entry's bytes; a log
 * reopens where it was; what is not a log of this kind is refused. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "harness.h"
#include "translog/log.h"
#include "translog/merkle.h"

static char dir[] = "/tmp/test_log_writer.XXXXXX";

static char *at(const char *name)
{
    return harness_path(dir, name);
}

static json_t *entry(unsigned i)
{
    return json_pack("{s:s, s:i}", "format", "module", "i", (int)i);
}

/* The root of entries 0..n-1 as the writer must have made it. */
static void expected_root(rs_translog *l, size_t n, rs_hash *out)
{
    rs_hash *leaves = calloc(n ? n : 1, sizeof(*leaves));
    rs_error err;

    for (size_t i = 0; leaves && i < n; i++) {
        rs_bytes e = { 0 };

        if (rs_log_read_entry(at("log"), rs_translog_size(l), i, &e, &err) < 0 ||
            rs_merkle_leaf(e.data, e.len, &leaves[i], &err) < 0)
            abort();
        rs_bytes_free(&e);
    }
    rs_merkle_root(leaves, n, out);
    free(leaves);
}

static void new_log_is_empty(rs_translog **l)
{
    rs_hash root, empty;
    rs_error err;

    CHECK(rs_translog_open(at("log"), at("log.key"), l, &err) < 0);
    CHECK(rs_translog_create(at("log"), at("log.key"), l, &err) == 0);
    if (!*l)
        abort();
    CHECK(rs_translog_size(*l) == 0);
    rs_translog_root(*l, &root);
    rs_merkle_root(NULL, 0, &empty);
    CHECK(!memcmp(root.b, empty.b, sizeof(root.b)));
    CHECK(access(at("log/checkpoint"), F_OK) == 0);
}

static void appends_in_order(rs_translog *l)
{
    json_t *batch[3] = { entry(0), entry(1), entry(2) };
    char *raw[2] = { rs_translog_encode(batch[0]), "{\"format\":\"pe\",\"i\":3}" };
    uint64_t first = 99;
    rs_hash root, want;
    rs_bytes e = { 0 };
    rs_error err;

    CHECK(rs_translog_append(l, batch, 3, &first, &err) == 0 && first == 0 && rs_translog_size(l) == 3);
    CHECK(rs_translog_append_raw(l, raw, 2, &first, &err) == 0 && first == 3 && rs_translog_size(l) == 5);
    /* The same bytes twice are two entries: the log records, it does not dedupe. */
    CHECK(rs_log_read_entry(at("log"), 5, 3, &e, &err) == 0 && e.len == strlen(raw[0]) && !memcmp(e.data, raw[0], e.len));
    rs_bytes_free(&e);
    CHECK(rs_log_read_entry(at("log"), 5, 4, &e, &err) == 0 && e.len == strlen(raw[1]));
    rs_bytes_free(&e);
    rs_translog_root(l, &root);
    expected_root(l, 5, &want);
    CHECK(!memcmp(root.b, want.b, sizeof(root.b)));
    for (int i = 0; i < 3; i++)
        json_decref(batch[i]);
    free(raw[0]);
}

#define THREADS 4
#define PER_THREAD 50

static void *append_some(void *arg)
{
    rs_translog *l = arg;
    rs_error err;

    for (unsigned i = 0; i < PER_THREAD; i++) {
        json_t *e = entry(1000 + i);

        if (rs_translog_append(l, &e, 1, NULL, &err) < 0)
            fprintf(stderr, "append: %s\n", err.msg);
        json_decref(e);
    }
    return NULL;
}

static void appends_from_threads(rs_translog *l)
{
    pthread_t t[THREADS];
    uint64_t before = rs_translog_size(l);
    rs_hash root, want;

    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, append_some, l);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    CHECK(rs_translog_size(l) == before + THREADS * PER_THREAD);
    rs_translog_root(l, &root);
    expected_root(l, (size_t)rs_translog_size(l), &want);
    CHECK(!memcmp(root.b, want.b, sizeof(root.b)));
}

static void reopens_where_it_was(rs_translog *l)
{
    uint64_t size = rs_translog_size(l);
    rs_hash root, again;
    json_t *e = entry(1);
    bool found = false;
    rs_error err;

    rs_translog_root(l, &root);
    rs_translog_close(l);
    l = NULL;
    CHECK(rs_translog_open(at("log"), at("log.key"), &l, &err) == 0);
    if (!l)
        return;
    rs_translog_root(l, &again);
    CHECK(rs_translog_size(l) == size && !memcmp(root.b, again.b, sizeof(root.b)));
    CHECK(rs_translog_contains(l, e, &found, &err) == 0 && found);
    json_decref(e);
    rs_translog_close(l);
}

static void refusals(void)
{
    rs_translog *l = NULL;
    rs_error err;

    /* A former JSONL log is for `log migrate`, not to be written over. */
    CHECK(mkdir(at("old"), 0755) == 0 && rs_write_file(at("old/entries.jsonl"), "", 0, 0644, &err) == 0);
    CHECK(rs_translog_create(at("old"), at("log.key"), &l, &err) < 0 && strstr(err.msg, "log migrate"));
    /* A checkpoint signed by another key. */
    CHECK(rs_log_keygen("example.org/other", RS_NOTE_ALG_ED25519, at("other"), &err) == 0);
    CHECK(rs_translog_open(at("log"), at("other.key"), &l, &err) < 0);
    CHECK(l == NULL);
}

int main(void)
{
    rs_translog *l = NULL;
    rs_error err;

    if (!mkdtemp(dir))
        return 1;
    CHECK(rs_log_keygen("example.org/log", RS_NOTE_ALG_ED25519, at("log"), &err) == 0);
    new_log_is_empty(&l);
    appends_in_order(l);
    appends_from_threads(l);
    reopens_where_it_was(l);
    refusals();
    rs_remove_tree(dir);
    return harness_finish("test_log_writer");
}

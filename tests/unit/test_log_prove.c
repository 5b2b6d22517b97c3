/* Proving from a log directory (translog/log_prove.c): a proof by index
 * and one by an entry's bytes are the same proof, and the offline verifier
 * accepts it under the log's key; an index past the tree, bytes the log
 * lacks, an entry changed on disk and a damaged checkpoint are refused,
 * with nothing handed out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "harness.h"
#include "translog/log.h"
#include "translog/proof.h"

static char dir[] = "/tmp/test_log_prove.XXXXXX";

static char *at(const char *name)
{
    return harness_path(dir, name);
}

/* 300 entries: a full bundle and tile of 256, then partial ones. */
#define ENTRIES 300
#define PROVEN 260

static char *entry_bytes(unsigned i)
{
    json_t *e = json_pack("{s:s, s:i}", "format", "module", "i", (int)i);
    char *bytes = rs_translog_encode(e);

    json_decref(e);
    return bytes;
}

static void make_log(rs_hash *root)
{
    rs_translog *l = NULL;
    char *bytes[ENTRIES];
    rs_error err;

    CHECK(rs_log_keygen("example.org/log", RS_NOTE_ALG_ED25519, at("log"), &err) == 0);
    CHECK(rs_translog_create(at("log"), at("log.key"), &l, &err) == 0);
    if (!l)
        abort();
    for (unsigned i = 0; i < ENTRIES; i++)
        if (!(bytes[i] = entry_bytes(i)))
            abort();
    CHECK(rs_translog_append_raw(l, bytes, ENTRIES, NULL, &err) == 0);
    rs_translog_root(l, root);
    rs_translog_close(l);
    for (unsigned i = 0; i < ENTRIES; i++)
        free(bytes[i]);
}

/* The proof as `log prove` prints it, read back and checked offline. */
static void verifies_offline(const rs_log_proof *p, const char *entry)
{
    char *text = rs_tlog_proof_format(p->proof.index, &p->proof.path, p->proof.checkpoint);
    rs_tlog_proof parsed = { 0 };
    rs_checkpoint cp = { 0 };
    rs_note_key vkey = { 0 };
    rs_error err;

    CHECK(text && rs_tlog_proof_parse(text, strlen(text), &parsed, &err) == 0);
    CHECK(rs_note_vkey_load(at("log.vkey"), &vkey, &err) == 0);
    CHECK(rs_tlog_proof_verify(&parsed, &vkey, NULL, 0, 0, entry, strlen(entry), &cp, &err) == 0);
    CHECK(cp.size == ENTRIES && parsed.index == PROVEN);
    rs_checkpoint_free(&cp);
    rs_note_key_free(&vkey);
    rs_tlog_proof_free(&parsed);
    free(text);
}

static void good_proofs(const rs_hash *root)
{
    _cleanup_(rs_log_proof_free) rs_log_proof by_index = { 0 }, by_entry = { 0 };
    _cleanup_free_ char *entry = entry_bytes(PROVEN);
    rs_hash leaf;
    rs_error err;

    CHECK(rs_log_prove(at("log"), PROVEN, &by_index, &err) == 0);
    CHECK(by_index.proof.index == PROVEN && by_index.cp.size == ENTRIES);
    CHECK(by_index.cp.origin && !strcmp(by_index.cp.origin, "example.org/log"));
    CHECK(!memcmp(&by_index.cp.root, root, sizeof(*root)));
    CHECK(rs_merkle_leaf(entry, strlen(entry), &leaf, &err) == 0 && !memcmp(&leaf, &by_index.leaf, sizeof(leaf)));
    CHECK(rs_merkle_verify_inclusion(PROVEN, ENTRIES, &leaf, &by_index.proof.path, root));
    /* The checkpoint is the log's file, byte for byte. */
    {
        _cleanup_bytes_ rs_bytes cp = { 0 };

        CHECK(rs_read_file(at("log/checkpoint"), RS_NOTE_MAX_SIZE, &cp, &err) == 0 && cp.len == by_index.proof.checkpoint_len &&
              !memcmp(cp.data, by_index.proof.checkpoint, cp.len));
    }
    verifies_offline(&by_index, entry);

    CHECK(rs_write_file(at("entry"), entry, strlen(entry), 0644, &err) == 0);
    CHECK(rs_log_prove_file(at("log"), at("entry"), &by_entry, &err) == 0);
    CHECK(by_entry.proof.index == PROVEN && by_entry.proof.path.n == by_index.proof.path.n &&
          !memcmp(by_entry.proof.path.h, by_index.proof.path.h, by_index.proof.path.n * sizeof(rs_hash)));
    /* The first entry, in the full bundle, too. */
    rs_log_proof_free(&by_index);
    CHECK(rs_log_prove(at("log"), 0, &by_index, &err) == 0 && by_index.proof.index == 0);
}

/* A refused proof leaves nothing to free and names its reason. */
static void refused(int rc, rs_log_proof *p, const rs_error *err, const char *reason)
{
    CHECK(rc < 0);
    CHECK(p->proof.checkpoint == NULL && p->proof.path.h == NULL && p->cp.origin == NULL);
    if (rc == 0) {   /* granted after all: the checks above failed */
        rs_log_proof_free(p);
        return;
    }
    if (!strstr(err->msg, reason)) {
        fprintf(stderr, "refused for \"%s\", not \"%s\"\n", err->msg, reason);
        CHECK(strstr(err->msg, reason));
    }
}

static void refusals(void)
{
    rs_log_proof p = { 0 };
    rs_bytes bundle = { 0 };
    char *digit;
    rs_error err;

    refused(rs_log_prove(at("log"), ENTRIES, &p, &err), &p, &err, "not in the tree of 300 entries");
    CHECK(rs_write_file(at("other"), "{}", 2, 0644, &err) == 0);
    refused(rs_log_prove_file(at("log"), at("other"), &p, &err), &p, &err, "no entry with these bytes");
    refused(rs_log_prove_file(at("log"), at("missing"), &p, &err), &p, &err, "missing");

    /* Entry 260 changed in its bundle, its length kept: the tiles no
     * longer lead from it to the checkpoint's root. */
    CHECK(rs_read_file(at("log/tile/entries/001.p/44"), RS_BUNDLE_MAX, &bundle, &err) == 0);
    digit = bundle.data ? memmem(bundle.data, bundle.len, "\"i\":260}", 8) : NULL;
    CHECK(digit != NULL);
    if (digit) {
        digit[5] = '7';
        CHECK(rs_write_file(at("log/tile/entries/001.p/44"), bundle.data, bundle.len, 0644, &err) == 0);
    }
    refused(rs_log_prove(at("log"), PROVEN, &p, &err), &p, &err, "do not give the checkpoint's root");
    rs_bytes_free(&bundle);

    /* A checkpoint that is not a signed note. */
    CHECK(rs_write_file(at("log/checkpoint"), "example.org/log\n300\n", 20, 0644, &err) == 0);
    refused(rs_log_prove(at("log"), 0, &p, &err), &p, &err, "/checkpoint: ");
}

int main(void)
{
    rs_hash root;

    if (!mkdtemp(dir))
        return 1;
    make_log(&root);
    good_proofs(&root);
    refusals();
    rs_remove_tree(dir);
    return harness_finish("test_log_prove");
}

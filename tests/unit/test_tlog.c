/* The tile log's pieces: signed notes and cosignatures, tile paths,
 * the parsers' refusals, proofs read from O(log n) tiles, and the
 * migration of a JSONL log that keeps every old head's root. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "crypto/ossl.h"
#include "crypto/signer.h"
#include "harness.h"
#include "translog/jsonl.h"
#include "translog/log.h"
#include "translog/migrate.h"
#include "translog/proof.h"
#include "translog/tiles.h"

static char dir[] = "/tmp/test_tlog.XXXXXX";

static char *at(const char *name)
{
    return harness_path(dir, name);
}

static void notes(void)
{
    char *skey = NULL, *vkey = NULL, *signed_note = NULL, *line = NULL, *cosigned = NULL;
    rs_note_key sk = { 0 }, vk = { 0 }, wsk = { 0 }, wvk = { 0 };
    rs_note n = { 0 };
    rs_error err;
    bool found = false;
    uint64_t t = 0;

    CHECK(rs_note_keygen("example.org/log", RS_NOTE_ALG_ED25519, &skey, &vkey, &err) == 0);
    skey[strlen(skey) - 1] = vkey[strlen(vkey) - 1] = '\0';
    CHECK(rs_note_skey_parse(skey, &sk, &err) == 0 && rs_note_vkey_parse(vkey, &vk, &err) == 0);
    CHECK(sk.hash == vk.hash && !strcmp(sk.name, "example.org/log"));
    CHECK(rs_note_vkey_parse(skey, &wvk, &err) < 0);    /* a signer key is no verifier key */
    CHECK(rs_note_sign(&sk, "example.org/log\n3\nAAAA\n", &signed_note, &err) == 0);
    CHECK(rs_note_parse(signed_note, strlen(signed_note), &n, &err) == 0);
    CHECK(rs_note_check(&n, &vk, &found, NULL, &err) == 0 && found);
    n.text[16] = '4';   /* the signed text altered */
    CHECK(rs_note_check(&n, &vk, &found, NULL, &err) < 0 && strstr(err.msg, "does not verify"));
    rs_note_free(&n);
    free(skey), free(vkey);

    /* A witness cosigns the checkpoint; its key can never pass as the log's. */
    CHECK(rs_note_keygen("witness.example", RS_NOTE_ALG_COSIGNATURE, &skey, &vkey, &err) == 0);
    skey[strlen(skey) - 1] = vkey[strlen(vkey) - 1] = '\0';
    CHECK(rs_note_skey_parse(skey, &wsk, &err) == 0 && rs_note_vkey_parse(vkey, &wvk, &err) == 0);
    CHECK(rs_note_sign(&wsk, "x\n", &line, &err) < 0);
    CHECK(rs_note_cosign_line(&wsk, "example.org/log\n3\nAAAA\n", 1700000000, &line, &err) == 0);
    CHECK(asprintf(&cosigned, "%s%s", signed_note, line) > 0);
    CHECK(rs_note_parse(cosigned, strlen(cosigned), &n, &err) == 0 && n.n_sigs == 2);
    CHECK(rs_note_check(&n, &wvk, &found, &t, &err) == 0 && found && t == 1700000000);
    CHECK(rs_check_witnesses(&n, &wvk, 1, 1, &err) == 0);
    CHECK(rs_check_witnesses(&n, &vk, 1, 1, &err) < 0);   /* the log's key is no witness */
    rs_note_free(&n);

    /* The parser's refusals. */
    CHECK(rs_note_parse("text\n", 5, &n, &err) < 0);
    CHECK(rs_note_parse("text\n\n- x AAAAAAA=\n", 18, &n, &err) < 0);
    CHECK(rs_note_parse("text\n\n\xe2\x80\x94 x+y AAAAAAA=\n", 22, &n, &err) < 0);
    CHECK(rs_note_parse("text\n\n\xe2\x80\x94 x AAAAAAA=", 19, &n, &err) < 0);
    free(skey), free(vkey), free(signed_note), free(line), free(cosigned);
    rs_note_key_free(&sk), rs_note_key_free(&vk), rs_note_key_free(&wsk), rs_note_key_free(&wvk);
}

static void paths_and_parsers(void)
{
    static const struct {
        int level;
        uint64_t n;
        unsigned w;
        const char *path;
    } cases[] = {
        { 0, 0, 256, "tile/0/000" },        { 0, 1234067, 256, "tile/0/x001/x234/067" },
        { 1, 999, 17, "tile/1/999.p/17" },  { RS_TILE_ENTRIES, 1000, 3, "tile/entries/x001/000.p/3" },
        { 2, 1000000, 256, "tile/2/x001/x000/000" },
    };
    static const char good[] = "c2sp.org/tlog-proof@v1\nextra AAAA\nindex 7\n\ncp";
    rs_checkpoint cp;
    rs_tlog_proof p;
    rs_error err;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *path = rs_tile_path(cases[i].level, cases[i].n, cases[i].w);

        CHECK(path && !strcmp(path, cases[i].path));
        free(path);
    }
    CHECK(rs_checkpoint_parse("o\n01\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n", &cp, &err) < 0);
    CHECK(rs_checkpoint_parse("o\n1\nAAAA\n", &cp, &err) < 0);
    CHECK(rs_checkpoint_parse("o\n18446744073709551616\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n", &cp, &err) < 0);
    CHECK(rs_checkpoint_parse("o\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\next\n", &cp, &err) == 0 && cp.size == 1);
    rs_checkpoint_free(&cp);
    CHECK(rs_tlog_proof_parse("c2sp.org/tlog-proof@v2\nindex 1\n\nx", 33, &p, &err) < 0);
    CHECK(rs_tlog_proof_parse("c2sp.org/tlog-proof@v1\nindex 01\n\nx", 34, &p, &err) < 0);
    CHECK(rs_tlog_proof_parse("c2sp.org/tlog-proof@v1\nindex 1\nAAAA\n\nx", 38, &p, &err) < 0);
    CHECK(rs_tlog_proof_parse(good, strlen(good), &p, &err) == 0 && p.index == 7 &&
          p.extra.len == 3 && p.checkpoint_len == 2);
    rs_tlog_proof_free(&p);
}

static json_t *entry(unsigned i)
{
    return json_pack("{s:s, s:i, s:s}", "format", "pe", "i", (int)i, "path", "usr/lib/shim/fbx64.efi");
}

/* A log of 70000 entries; proofs read a handful of tiles. */
static void proofs_read_few_tiles(void)
{
    rs_translog *l = NULL;
    rs_error err;
    json_t *batch[1000];
    rs_hash_list path = { 0 };
    rs_tile_reader r = { .dir = at("big") };
    rs_hash root, leaf;
    rs_bytes e = { 0 };

    CHECK(rs_log_keygen("example.org/log", RS_NOTE_ALG_ED25519, at("log"), &err) == 0);
    CHECK(rs_translog_create(at("big"), at("log.key"), &l, &err) == 0);
    for (unsigned b = 0; l && b < 70; b++) {
        for (unsigned i = 0; i < 1000; i++)
            batch[i] = entry(b * 1000 + i);
        CHECK(rs_translog_append(l, batch, 1000, NULL, &err) == 0);
        for (unsigned i = 0; i < 1000; i++)
            json_decref(batch[i]);
    }
    rs_translog_root(l, &root);
    r.size = rs_translog_size(l);
    rs_translog_close(l);
    CHECK(r.size == 70000);
    CHECK(rs_tile_inclusion(&r, 12345, &path, &err) == 0);
    CHECK(r.reads <= 8);
    CHECK(rs_log_read_entry(at("big"), r.size, 12345, &e, &err) == 0 && rs_merkle_leaf(e.data, e.len, &leaf, &err) == 0);
    CHECK(rs_merkle_verify_inclusion(12345, r.size, &leaf, &path, &root));
    rs_hash_list_free(&path);
    r.reads = 0;
    CHECK(rs_tile_consistency(&r, 33333, &path, &err) == 0 && r.reads <= 10);
    rs_hash_list_free(&path);
    rs_tile_reader_free(&r);
    rs_bytes_free(&e);
    /* Reopening reads the right edge, and appends go on. */
    CHECK(rs_translog_open(at("big"), at("log.key"), &l, &err) == 0);
    if (l) {
        bool found = false;

        batch[0] = entry(7);
        CHECK(rs_translog_contains(l, batch[0], &found, &err) == 0 && found);
        json_decref(batch[0]);
        batch[0] = entry(99999999);
        CHECK(rs_translog_contains(l, batch[0], &found, &err) == 0 && !found);
        CHECK(rs_translog_append(l, batch, 1, NULL, &err) == 0 && rs_translog_size(l) == 70001);
        json_decref(batch[0]);
        rs_translog_close(l);
    }
}

/* The former JSONL log, migrated: the same bytes, every head's root. */
static void migrate(void)
{
    rs_signer *signer = NULL;
    rs_jsonl *old = NULL;
    rs_error err;
    uint64_t n = 0, heads = 0;
    const unsigned sizes[] = { 5, 300, 301, 700 };
    rs_note_key vk = { 0 };
    rs_audit_result res;
    unsigned done = 0;

    harness_make_key(at("old.key"), at("old.crt"));
    CHECK(rs_signer_open(at("old.key"), at("old.crt"), &signer, &err) == 0);
    CHECK(signer && rs_jsonl_create(at("old"), signer, &old, &err) == 0);
    for (size_t h = 0; old && h < 4; h++) {
        for (; done < sizes[h]; done++) {
            json_t *e = entry(done);

            CHECK(rs_jsonl_append(old, &e, 1, NULL, &err) == 0);
            json_decref(e);
        }
        CHECK(rs_jsonl_checkpoint(old, &err) == 0);
    }
    if (old)
        rs_jsonl_close(old);
    CHECK(rs_log_migrate(at("old"), at("old.crt"), at("new"), at("log.key"), &n, &heads, &err) == 0);
    if (n != 700 || heads < 4)
        fprintf(stderr, "migrated %llu entries, %llu heads: %s\n", (unsigned long long)n, (unsigned long long)heads, err.msg);
    CHECK(n == 700 && heads >= 4);   /* the old writer also signs heads as it goes */
    CHECK(rs_note_vkey_load(at("log.vkey"), &vk, &err) == 0);
    CHECK(rs_log_audit(at("new"), &vk, NULL, 0, 0, &res, &err) == 0 && res.size == 700);
    /* Every old signed head's root, read again from the new log's tiles. */
    {
        X509 *pin = NULL;
        rs_log_view v = { 0 };
        rs_tile_reader r = { .dir = at("new"), .size = 700 };

        CHECK(rs_load_cert(at("old.crt"), &pin, &err) == 0 && rs_log_verify(at("old"), pin, &v, &err) == 0);
        for (size_t h = 0; h < v.n_heads; h++) {
            rs_hash root;

            CHECK(rs_tile_subtree(&r, 0, v.heads[h].size, &root, &err) == 0 &&
                  memcmp(&root, &v.heads[h].root, sizeof(root)) == 0);
        }
        CHECK(v.n_heads >= 4);
        rs_tile_reader_free(&r);
        rs_log_view_free(&v);
        X509_free(pin);
    }
    CHECK(rs_log_migrate(at("old"), at("old.crt"), at("new"), at("log.key"), &n, &heads, &err) < 0);
    rs_note_key_free(&vk);
    if (signer)
        rs_signer_free(signer);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    notes();
    paths_and_parsers();
    proofs_read_few_tiles();
    migrate();
    rs_remove_tree(dir);
    return harness_finish("test_tlog");
}

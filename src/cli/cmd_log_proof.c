/* log prove, verify-proof, consistency and cosign: each reads the
 * checkpoint and O(log n) tiles, or nothing but its arguments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/file.h"
#include "cli/cmd_log.h"
#include "crypto/ossl.h"
#include "translog/log.h"
#include "translog/proof.h"

/* The proof is made by the log library (rs_log_prove), as any other
 * prover makes it; this prints it. */
int log_prove(const log_args *a)
{
    _cleanup_(rs_log_proof_free) rs_log_proof p = { 0 };
    _cleanup_free_ char *out = NULL;
    rs_error err;
    long index = 0;

    if (!(a->n_pos == 2 && !a->entry) && !(a->n_pos == 1 && a->entry))
        return cli_usage(a->cmd, "prove takes LOGDIR and INDEX or --entry FILE");
    if (a->n_pos == 2 && !cli_parse_index(a->pos[1], &index))
        return cli_usage(a->cmd, "INDEX must be a number");
    if ((a->entry ? rs_log_prove_file(a->pos[0], a->entry, &p, &err)
                  : rs_log_prove(a->pos[0], (uint64_t)index, &p, &err)) < 0)
        return cli_fail(&err);
    if (a->json)
        return cli_json_print(json_pack("{s:s, s:s, s:I, s:I, s:o, s:o, s:o, s:s}", "log", a->pos[0], "origin",
                                        p.cp.origin, "index", (json_int_t)p.proof.index, "size", (json_int_t)p.cp.size,
                                        "root", log_hash_json(&p.cp.root), "leaf_hash", log_hash_json(&p.leaf),
                                        "proof", log_hash_list_json(&p.proof.path), "checkpoint", p.proof.checkpoint));
    if (!(out = rs_tlog_proof_format(p.proof.index, &p.proof.path, p.proof.checkpoint)))
        return EXIT_FAIL;
    fputs(out, stdout);
    return EXIT_OK;
}

static int print_proof_json(const log_args *a, const rs_tlog_proof *p, const rs_checkpoint *cp, const rs_bytes *entry)
{
    rs_hash leaf;
    rs_error err;

    if (rs_merkle_leaf(entry->data, entry->len, &leaf, &err) < 0)
        return cli_fail(&err);
    return cli_json_print(json_pack("{s:s, s:s, s:s, s:I, s:I, s:o, s:o}", "proof", a->pos[0], "entry", a->entry,
                                    "origin", cp->origin, "index", (json_int_t)p->index, "size", (json_int_t)cp->size,
                                    "root", log_hash_json(&cp->root), "leaf_hash", log_hash_json(&leaf)));
}

int log_verify_proof(const log_args *a)
{
    rs_note_key vkey = { 0 }, witnesses[LOG_MAX_WITNESSES] = { 0 };
    _cleanup_bytes_ rs_bytes text = { 0 }, entry = { 0 };
    _cleanup_(rs_tlog_proof_free) rs_tlog_proof p = { 0 };
    _cleanup_(rs_checkpoint_free) rs_checkpoint cp = { 0 };
    rs_error err;
    int rc;

    if (a->n_pos != 1 || !a->entry)
        return cli_usage(a->cmd, "verify-proof takes PROOF and --entry FILE");
    if ((rc = log_load_keys(a, &vkey, witnesses)) != EXIT_OK)
        return rc;
    rc = -1;
    if (rs_read_file(a->pos[0], RS_PROOF_MAX_SIZE, &text, &err) < 0 ||
        rs_tlog_proof_parse((const char *)text.data, text.len, &p, &err) < 0)
        rs_error_prefix(&err, "%s", a->pos[0]);
    else if (rs_read_file(a->entry, RS_ENTRY_MAX, &entry, &err) < 0)
        rs_error_prefix(&err, "%s", a->entry);
    else if (rs_tlog_proof_verify(&p, &vkey, witnesses, a->n_witnesses, (size_t)a->min_witnesses, entry.data,
                                  entry.len, &cp, &err) < 0)
        rs_error_prefix(&err, "%s", a->pos[0]);
    else
        rc = 0;
    log_free_keys(&vkey, witnesses, a->n_witnesses);
    if (rc < 0)
        return cli_fail(&err);
    if (a->json)
        return print_proof_json(a, &p, &cp, &entry);
    printf("%s: entry %llu of %s's tree of %llu entries\n", a->entry, (unsigned long long)p.index, cp.origin,
           (unsigned long long)cp.size);
    return EXIT_OK;
}

/* Checks that the log in dir (signed by vkey) extends the checkpoint in
 * old_path; fills the new checkpoint, its text and the proof. */
static int check_extends(const char *dir, const char *old_path, const rs_note_key *vkey, rs_checkpoint *old_cp,
                         rs_checkpoint *cp, char **msg, rs_hash_list *proof, rs_error *err)
{
    _cleanup_bytes_ rs_bytes old = { 0 };
    _cleanup_(rs_note_free) rs_note old_note = { 0 }, note = { 0 };
    rs_tile_reader r = { .dir = dir };
    int rc = 0;

    if (rs_read_file(old_path, RS_NOTE_MAX_SIZE, &old, err) < 0 ||
        rs_checkpoint_open((const char *)old.data, old.len, vkey, &old_note, old_cp, err) < 0)
        return rs_error_prefix(err, "%s", old_path);
    if (rs_log_read_checkpoint(dir, vkey, msg, &note, cp, err) < 0)
        return -1;
    if (old_cp->size > cp->size)
        return rs_fail(err, "%s: the log has %llu entries, fewer than the old checkpoint's %llu", dir,
                       (unsigned long long)cp->size, (unsigned long long)old_cp->size);
    r.size = cp->size;
    if (old_cp->size > 0)
        rc = rs_tile_consistency(&r, old_cp->size, proof, err);
    rs_tile_reader_free(&r);
    if (rc < 0)
        return -1;
    if (old_cp->size > 0 &&
        !rs_merkle_verify_consistency(old_cp->size, cp->size, &old_cp->root, &cp->root, proof))
        return rs_fail(err, "%s: the log does NOT extend %s (its tree of %llu entries has another history)", dir,
                       old_path, (unsigned long long)old_cp->size);
    return 0;
}

static void print_hash_line(const char *label, uint64_t size, const rs_hash *h)
{
    _cleanup_free_ char *b64 = rs_base64_encode(h->b, RS_HASH_LEN);

    printf("%s %llu %s\n", label, (unsigned long long)size, b64 ? b64 : "");
}

int log_consistency(const log_args *a)
{
    rs_note_key vkey = { 0 }, witnesses[LOG_MAX_WITNESSES] = { 0 };
    _cleanup_(rs_checkpoint_free) rs_checkpoint old = { 0 }, cp = { 0 };
    _cleanup_(rs_hash_list_free) rs_hash_list proof = { 0 };
    _cleanup_free_ char *msg = NULL;
    rs_error err;
    int rc;

    if (a->n_pos != 2)
        return cli_usage(a->cmd, "consistency takes LOGDIR and OLD-CHECKPOINT");
    if ((rc = log_load_keys(a, &vkey, witnesses)) != EXIT_OK)
        return rc;
    rc = check_extends(a->pos[0], a->pos[1], &vkey, &old, &cp, &msg, &proof, &err);
    log_free_keys(&vkey, witnesses, a->n_witnesses);
    if (rc < 0)
        return cli_fail(&err);
    if (a->json)
        return cli_json_print(json_pack("{s:s, s:s, s:o, s:o, s:o}", "log", a->pos[0], "origin", cp.origin, "old",
                                        log_tree_json(old.size, &old.root), "new", log_tree_json(cp.size, &cp.root),
                                        "proof", log_hash_list_json(&proof)));
    print_hash_line("old", old.size, &old.root);
    print_hash_line("new", cp.size, &cp.root);
    for (size_t i = 0; i < proof.n; i++) {
        _cleanup_free_ char *b64 = rs_base64_encode(proof.h[i].b, RS_HASH_LEN);

        printf("%s\n", b64 ? b64 : "");
    }
    return EXIT_OK;
}

/* A witness's part: it cosigns the log's checkpoint only once it has
 * checked that the log extends what it cosigned before. */
int log_cosign(const log_args *a)
{
    rs_note_key vkey = { 0 }, witnesses[LOG_MAX_WITNESSES] = { 0 }, key = { 0 };
    _cleanup_(rs_checkpoint_free) rs_checkpoint old = { 0 }, cp = { 0 };
    _cleanup_(rs_hash_list_free) rs_hash_list proof = { 0 };
    _cleanup_(rs_note_free) rs_note note = { 0 };
    _cleanup_free_ char *msg = NULL, *line = NULL;
    rs_error err;
    int rc;

    if (a->n_pos != 2 || !a->key)
        return cli_usage(a->cmd, "cosign takes LOGDIR, OLD-CHECKPOINT and --key WITNESS-KEY");
    if ((rc = log_load_keys(a, &vkey, witnesses)) != EXIT_OK)
        return rc;
    rc = rs_note_skey_load(a->key, &key, &err) < 0 ||
         check_extends(a->pos[0], a->pos[1], &vkey, &old, &cp, &msg, &proof, &err) < 0 ||
         rs_note_parse(msg, strlen(msg), &note, &err) < 0 ||
         rs_note_cosign_line(&key, note.text, (uint64_t)time(NULL), &line, &err) < 0;
    log_free_keys(&vkey, witnesses, a->n_witnesses);
    rs_note_key_free(&key);
    if (rc)
        return cli_fail(&err);
    /* The checkpoint with the cosignature appended, as witnesses return it. */
    printf("%s%s", msg, line);
    return EXIT_OK;
}

/* Making an inclusion proof from a log directory, as `log prove` prints
 * it and as any other prover must make it: the checkpoint as it is, the
 * audit path from O(log n) tiles, and the entry's own bytes, checked to
 * give the checkpoint's root before the proof is handed out. */
#include "translog/proof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "translog/log.h"

void rs_log_proof_free(rs_log_proof *p)
{
    rs_tlog_proof_free(&p->proof);
    rs_checkpoint_free(&p->cp);
    memset(p, 0, sizeof(*p));
}

/* The log's checkpoint as it is: a prover checks no signature, since
 * whoever reads the proof must check it again against the key they
 * pinned, and a prover's check would only stand in for theirs. */
static int read_checkpoint_unchecked(const char *dir, rs_log_proof *out, rs_error *err)
{
    _cleanup_free_ char *path = NULL;
    _cleanup_bytes_ rs_bytes b = { 0 };
    _cleanup_(rs_note_free) rs_note note = { 0 };

    if (asprintf(&path, "%s/checkpoint", dir) < 0)
        return rs_fail(err, "out of memory");
    if (rs_read_file(path, RS_NOTE_MAX_SIZE, &b, err) < 0 ||
        rs_note_parse((const char *)b.data, b.len, &note, err) < 0 ||
        rs_checkpoint_parse(note.text, &out->cp, err) < 0)
        return rs_error_prefix(err, "%s", path);
    if (!(out->proof.checkpoint = strndup((const char *)b.data, b.len)))
        return rs_fail(err, "out of memory");
    out->proof.checkpoint_len = strlen(out->proof.checkpoint);
    return 0;
}

/* The index of the entry with the bytes of entry_path, through the leaf
 * index (a log made by another writer has none, and finds nothing). */
static int find_index(const char *dir, uint64_t size, const char *entry_path, uint64_t *index, rs_error *err)
{
    _cleanup_bytes_ rs_bytes e = { 0 };
    bool found;

    if (rs_read_file(entry_path, RS_ENTRY_MAX, &e, err) < 0)
        return rs_error_prefix(err, "%s", entry_path);
    if (rs_log_find_entry(dir, size, (const char *)e.data, e.len, index, &found, err) < 0)
        return -1;
    return found ? 0 : rs_fail(err, "%s: no entry with these bytes in %s's leaf index", entry_path, dir);
}

/* The audit path of out->proof.index in the checkpoint's tree, and the
 * entry's leaf hash; together they must give the checkpoint's root, or
 * the log's files disagree and the proof would mislead. */
static int prove_index(const char *dir, rs_log_proof *out, rs_error *err)
{
    _cleanup_(rs_tile_reader_free) rs_tile_reader r = { .dir = dir, .size = out->cp.size };
    _cleanup_bytes_ rs_bytes entry = { 0 };
    uint64_t index = out->proof.index;

    if (rs_tile_inclusion(&r, index, &out->proof.path, err) < 0 ||
        rs_log_read_entry(dir, out->cp.size, index, &entry, err) < 0 ||
        rs_merkle_leaf(entry.data, entry.len, &out->leaf, err) < 0)
        return -1;
    if (!rs_merkle_verify_inclusion(index, out->cp.size, &out->leaf, &out->proof.path, &out->cp.root))
        return rs_fail(err, "%s: entry %llu and the tiles do not give the checkpoint's root (run log verify)", dir,
                       (unsigned long long)index);
    return 0;
}

/* The entry at index, or, given entry_path, the one with its bytes. */
static int prove(const char *dir, uint64_t index, const char *entry_path, rs_log_proof *out, rs_error *err)
{
    memset(out, 0, sizeof(*out));
    out->proof.index = index;
    if (read_checkpoint_unchecked(dir, out, err) < 0 ||
        (entry_path && find_index(dir, out->cp.size, entry_path, &out->proof.index, err) < 0) ||
        prove_index(dir, out, err) < 0) {
        rs_log_proof_free(out);
        return -1;
    }
    return 0;
}

int rs_log_prove(const char *dir, uint64_t index, rs_log_proof *out, rs_error *err)
{
    return prove(dir, index, NULL, out, err);
}

int rs_log_prove_file(const char *dir, const char *entry_path, rs_log_proof *out, rs_error *err)
{
    return prove(dir, 0, entry_path, out, err);
}

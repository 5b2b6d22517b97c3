/* Offline proofs: c2sp.org/tlog-proof@v1 inclusion proofs,
 *
 *   c2sp.org/tlog-proof@v1
 *   [extra <base64>]
 *   index <N>
 *   <base64 hash>            (the RFC 6962 audit path, leaf side first)
 *   ...
 *   (blank line)
 *   <signed checkpoint>
 *
 * made from a log directory (log_prove.c) or read and checked offline
 * (proof.c), and the full audit of a log directory (audit.c). */
#ifndef RS_PROOF_H
#define RS_PROOF_H

#include <stdbool.h>
#include <stdint.h>

#include "base/bytes.h"
#include "translog/merkle.h"
#include "translog/note.h"
#include "translog/tiles.h"

#define RS_PROOF_HEADER "c2sp.org/tlog-proof@v1\n"
/* A proof has at most 64 hashes (one per level of a 64-bit tree) and a
 * checkpoint of at most RS_NOTE_MAX_SIZE. */
#define RS_PROOF_MAX_HASHES 64
#define RS_PROOF_MAX_SIZE (RS_NOTE_MAX_SIZE + 8192)

typedef struct rs_tlog_proof {
    uint64_t index;
    rs_hash_list path;
    char *checkpoint;          /* the signed note, as it came */
    size_t checkpoint_len;
    rs_bytes extra;
} rs_tlog_proof;

void rs_tlog_proof_free(rs_tlog_proof *p);
int rs_tlog_proof_parse(const char *text, size_t len, rs_tlog_proof *out, rs_error *err);
char *rs_tlog_proof_format(uint64_t index, const rs_hash_list *path, const char *checkpoint);
/* Checks the checkpoint against vkey (and witnesses, at least min_witnesses
 * of them), then that entry is at the proof's index in its tree. */
int rs_tlog_proof_verify(const rs_tlog_proof *p, const rs_note_key *vkey, const rs_note_key *witnesses,
                         size_t n_witnesses, size_t min_witnesses, const void *entry, size_t len,
                         rs_checkpoint *cp, rs_error *err);
/* At least min of the witness keys cosigned note. */
int rs_check_witnesses(const rs_note *note, const rs_note_key *witnesses, size_t n, size_t min, rs_error *err);

/* An inclusion proof made from a log directory: the proof as
 * c2sp.org/tlog-proof@v1 carries it (its checkpoint is the log's signed
 * note as read; rs_tlog_proof_format prints it), that checkpoint parsed,
 * and the entry's leaf hash. */
typedef struct rs_log_proof {
    rs_tlog_proof proof;
    rs_checkpoint cp;
    rs_hash leaf;
} rs_log_proof;

void rs_log_proof_free(rs_log_proof *p);
/* Proves the entry at index of the tree of dir's checkpoint: reads the
 * checkpoint (its signatures unchecked: whoever reads the proof checks
 * them against the key they pinned), the audit path's O(log n) tiles and
 * the entry, and refuses when they do not give the checkpoint's root.
 * A refusal leaves *out empty, with nothing to free. */
int rs_log_prove(const char *dir, uint64_t index, rs_log_proof *out, rs_error *err);
/* The same for the entry with exactly the bytes of the file entry_path,
 * found through the leaf index (translog/log.h); refused when the index
 * has no such entry. */
int rs_log_prove_file(const char *dir, const char *entry_path, rs_log_proof *out, rs_error *err);

typedef struct rs_audit_result {
    uint64_t size;
    rs_hash root;
    uint64_t tiles;
} rs_audit_result;

/* Streams every bundle and tile of the log in dir against its checkpoint
 * (signed by vkey): entries hash to the level-0 tiles, every tile hashes
 * to its place in the tile above, the tree to the checkpoint's root. The
 * first entry or tile that does not fit is named. Memory: one bundle and
 * one partial tile per level. */
int rs_log_audit(const char *dir, const rs_note_key *vkey, const rs_note_key *witnesses, size_t n_witnesses,
                 size_t min_witnesses, rs_audit_result *out, rs_error *err);
/* Reads and checks dir's checkpoint. */
int rs_log_read_checkpoint(const char *dir, const rs_note_key *vkey, char **msg, rs_note *note, rs_checkpoint *cp,
                           rs_error *err);

#endif

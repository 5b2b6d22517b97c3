/* Merkle tree hashing as RFC 9162 (Certificate Transparency v2) defines
 * it: leaves hash as SHA-256(0x00 || data), interior nodes as
 * SHA-256(0x01 || left || right), and the tree over n leaves splits at the
 * largest power of two below n. Proofs and their checks follow §2.1.3 and
 * §2.1.4 of the RFC step by step, so any RFC 9162 verifier accepts them. */
#ifndef RS_MERKLE_H
#define RS_MERKLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define RS_HASH_LEN 32

typedef struct rs_hash {
    uint8_t b[RS_HASH_LEN];
} rs_hash;

int rs_merkle_leaf(const void *data, size_t len, rs_hash *out, rs_error *err);
void rs_merkle_node(const rs_hash *left, const rs_hash *right, rs_hash *out);

/* MTH over the first n leaf hashes (the empty tree hashes as SHA-256("")). */
void rs_merkle_root(const rs_hash *leaves, size_t n, rs_hash *out);

/* A list of hashes, as proofs are. */
typedef struct rs_hash_list {
    rs_hash *h;
    size_t n;
} rs_hash_list;

void rs_hash_list_free(rs_hash_list *l);
/* Appends a copy of h. */
int rs_hash_list_push(rs_hash_list *l, const rs_hash *h, rs_error *err);

/* PATH(index, D[0:size]): the audit path, leaf side first. */
int rs_merkle_inclusion_proof(const rs_hash *leaves, size_t size, size_t index, rs_hash_list *out, rs_error *err);
/* PROOF(old_size, D[0:new_size]) for 0 < old_size <= new_size. */
int rs_merkle_consistency_proof(const rs_hash *leaves, size_t old_size, size_t new_size, rs_hash_list *out,
                                rs_error *err);

bool rs_merkle_verify_inclusion(uint64_t index, uint64_t size, const rs_hash *leaf, const rs_hash_list *path,
                                const rs_hash *root);
bool rs_merkle_verify_consistency(uint64_t old_size, uint64_t new_size, const rs_hash *old_root,
                                  const rs_hash *new_root, const rs_hash_list *proof);

/* An append-only tree kept as the roots of its perfect subtrees (at most
 * one per bit of the size), so appending and taking the root cost
 * O(log n) instead of rehashing every leaf. */
typedef struct rs_merkle_frontier {
    rs_hash sub[64];
    unsigned count;
    uint64_t size;
} rs_merkle_frontier;

void rs_merkle_frontier_push(rs_merkle_frontier *f, const rs_hash *leaf);
void rs_merkle_frontier_root(const rs_merkle_frontier *f, rs_hash *out);

#endif

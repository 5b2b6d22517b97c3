/* The full audit of a log directory (translog/proof.h): recomputes every
 * tile from the entries up, compares each with its file byte for byte,
 * and the root with the checkpoint's. */
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "crypto/digest.h"
#include "crypto/ossl.h"
#include "translog/proof.h"

typedef struct audit {
    const char *dir;
    uint64_t size;
    rs_hash acc[RS_TILE_LEVELS][RS_TILE_WIDTH];
    unsigned acc_n[RS_TILE_LEVELS];
    uint64_t count[RS_TILE_LEVELS];
    uint64_t tiles;
    EVP_MD_CTX *md;
    const EVP_MD *sha256;
} audit;

static int check_tile(audit *a, unsigned t, uint64_t index, unsigned width, rs_error *err)
{
    _cleanup_bytes_ rs_bytes b = { 0 };
    _cleanup_free_ char *rel = rs_tile_path((int)t, index, width);

    if (rs_tile_read_file(a->dir, (int)t, index, width, &b, err) < 0)
        return -1;
    a->tiles++;
    for (unsigned k = 0; k < width; k++) {
        if (memcmp(b.data + k * RS_HASH_LEN, a->acc[t][k].b, RS_HASH_LEN) == 0)
            continue;
        if (t == 0)
            return rs_fail(err, "%s/%s: entry %llu does not match its hash in the tile (the entry bundle or the "
                                "tile was altered)", a->dir, rel ? rel : "tile",
                           (unsigned long long)(index * RS_TILE_WIDTH + k));
        return rs_fail(err, "%s/%s: hash %u does not match the tile below it", a->dir, rel ? rel : "tile", k);
    }
    return 0;
}

/* SHA-256(0x01 || left || right) with the audit's context: a fresh
 * context per node (as rs_merkle_node has) costs more than the hash. */
static int node_hash(audit *a, const rs_hash *left, const rs_hash *right, rs_hash *out, rs_error *err)
{
    static const uint8_t one = 1;

    if (EVP_DigestInit_ex(a->md, a->sha256, NULL) != 1 || EVP_DigestUpdate(a->md, &one, 1) != 1 ||
        EVP_DigestUpdate(a->md, left->b, RS_HASH_LEN) != 1 || EVP_DigestUpdate(a->md, right->b, RS_HASH_LEN) != 1 ||
        EVP_DigestFinal_ex(a->md, out->b, NULL) != 1)
        return rs_fail_ssl(err, "SHA-256 failed");
    return 0;
}

/* The root of n (a power of two) hashes. */
static int perfect_root(audit *a, const rs_hash *h, size_t n, rs_hash *out, rs_error *err)
{
    rs_hash tmp[RS_TILE_WIDTH / 2];

    if (n == 1) {
        *out = h[0];
        return 0;
    }
    for (size_t i = 0; i < n / 2; i++)
        if (node_hash(a, &h[2 * i], &h[2 * i + 1], &tmp[i], err) < 0)
            return -1;
    for (n /= 2; n > 1; n /= 2)
        for (size_t i = 0; i < n / 2; i++)
            if (node_hash(a, &tmp[2 * i], &tmp[2 * i + 1], &tmp[i], err) < 0)
                return -1;
    *out = tmp[0];
    return 0;
}

static int add_hash(audit *a, unsigned t, const rs_hash *h, rs_error *err)
{
    rs_hash root;

    if (t >= RS_TILE_LEVELS)
        return rs_fail(err, "a tree too large");
    a->acc[t][a->acc_n[t]++] = *h;
    a->count[t]++;
    if (a->acc_n[t] < RS_TILE_WIDTH)
        return 0;
    if (check_tile(a, t, a->count[t] / RS_TILE_WIDTH - 1, RS_TILE_WIDTH, err) < 0)
        return -1;
    if (perfect_root(a, a->acc[t], RS_TILE_WIDTH, &root, err) < 0)
        return -1;
    a->acc_n[t] = 0;
    return add_hash(a, t + 1, &root, err);
}

static int leaf_hash(audit *a, const uint8_t *data, size_t len, rs_hash *out, rs_error *err)
{
    static const uint8_t zero = 0;

    if (EVP_DigestInit_ex(a->md, a->sha256, NULL) != 1 || EVP_DigestUpdate(a->md, &zero, 1) != 1 ||
        EVP_DigestUpdate(a->md, data, len) != 1 || EVP_DigestFinal_ex(a->md, out->b, NULL) != 1)
        return rs_fail_ssl(err, "SHA-256 failed");
    return 0;
}

static int audit_bundle(audit *a, uint64_t index, rs_error *err)
{
    unsigned w = rs_tile_width(a->size, RS_TILE_ENTRIES, index);
    size_t offs[RS_TILE_WIDTH], lens[RS_TILE_WIDTH];
    _cleanup_bytes_ rs_bytes b = { 0 };
    _cleanup_free_ char *rel = rs_tile_path(RS_TILE_ENTRIES, index, w);

    if (rs_tile_read_file(a->dir, RS_TILE_ENTRIES, index, w, &b, err) < 0)
        return -1;
    if (rs_bundle_split(b.data, b.len, w, offs, lens, err) < 0)
        return rs_error_prefix(err, "%s/%s", a->dir, rel ? rel : "tile/entries");
    for (unsigned i = 0; i < w; i++) {
        rs_hash leaf;

        if (leaf_hash(a, b.data + offs[i], lens[i], &leaf, err) < 0 || add_hash(a, 0, &leaf, err) < 0)
            return -1;
    }
    return 0;
}

/* The tree's root from the right edge left in the accumulators: one
 * perfect subtree per bit of the size, each within its level's partial
 * tile, combined right to left. */
static int edge_root(audit *a, rs_hash *out, rs_error *err)
{
    bool have = false;

    if (a->size == 0) {
        rs_merkle_root(NULL, 0, out);
        return 0;
    }
    for (unsigned bit = 0; bit < 64; bit++) {
        unsigned t = bit / RS_TILE_HEIGHT, sub = bit % RS_TILE_HEIGHT;
        uint64_t first;
        rs_hash node;

        if (!((a->size >> bit) & 1))
            continue;
        first = (((a->size >> bit) - 1) << sub) % RS_TILE_WIDTH;
        if (perfect_root(a, a->acc[t] + first, (size_t)1 << sub, &node, err) < 0 ||
            (have && node_hash(a, &node, out, out, err) < 0))
            return -1;
        if (!have)
            *out = node;
        have = true;
    }
    return 0;
}

static int audit_tree(audit *a, const rs_checkpoint *cp, rs_error *err)
{
    rs_hash root;

    for (uint64_t i = 0; i * RS_TILE_WIDTH < a->size; i++)
        if (audit_bundle(a, i, err) < 0)
            return -1;
    for (unsigned t = 0; t < RS_TILE_LEVELS; t++)
        if (a->acc_n[t] && check_tile(a, t, a->count[t] / RS_TILE_WIDTH, a->acc_n[t], err) < 0)
            return -1;
    if (edge_root(a, &root, err) < 0)
        return -1;
    if (memcmp(&root, &cp->root, sizeof(root)))
        return rs_fail(err, "%s: the entries' tree has another root than the checkpoint of %llu entries", a->dir,
                       (unsigned long long)cp->size);
    return 0;
}

int rs_log_audit(const char *dir, const rs_note_key *vkey, const rs_note_key *witnesses, size_t n_witnesses,
                 size_t min_witnesses, rs_audit_result *out, rs_error *err)
{
    _cleanup_free_ audit *a = calloc(1, sizeof(*a));
    _cleanup_free_ char *msg = NULL;
    _cleanup_(rs_note_free) rs_note note = { 0 };
    _cleanup_(rs_checkpoint_free) rs_checkpoint cp = { 0 };
    int rc;

    memset(out, 0, sizeof(*out));
    if (!a)
        return rs_fail(err, "out of memory");
    if (rs_log_read_checkpoint(dir, vkey, &msg, &note, &cp, err) < 0)
        return -1;
    if (rs_check_witnesses(&note, witnesses, n_witnesses, min_witnesses, err) < 0)
        return rs_error_prefix(err, "%s/checkpoint", dir);
    a->dir = dir;
    a->size = cp.size;
    if (!(a->md = EVP_MD_CTX_new()) || rs_md_by_name("sha256", &a->sha256, err) < 0) {
        EVP_MD_CTX_free(a->md);
        return rs_fail(err, "out of memory");
    }
    rc = audit_tree(a, &cp, err);
    EVP_MD_CTX_free(a->md);
    out->size = cp.size;
    out->root = cp.root;
    out->tiles = a->tiles;
    return rc;
}

#include "translog/merkle.h"

#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "crypto/ossl.h"

int rs_merkle_leaf(const void *data, size_t len, rs_hash *out, rs_error *err)
{
    _cleanup_free_ uint8_t *buf = len < SIZE_MAX ? malloc(len + 1) : NULL;

    if (!buf)
        return rs_fail(err, "out of memory");
    buf[0] = 0x00;
    if (len)
        memcpy(buf + 1, data, len);
    rs_sha256(buf, len + 1, out->b);
    return 0;
}

void rs_merkle_node(const rs_hash *left, const rs_hash *right, rs_hash *out)
{
    uint8_t buf[1 + 2 * RS_HASH_LEN];

    buf[0] = 0x01;
    memcpy(buf + 1, left->b, RS_HASH_LEN);
    memcpy(buf + 1 + RS_HASH_LEN, right->b, RS_HASH_LEN);
    rs_sha256(buf, sizeof(buf), out->b);
}

/* The largest power of two smaller than n (n > 1). */
static size_t split(size_t n)
{
    size_t k = 1;

    while (k < n - k)
        k <<= 1;
    return k;
}

void rs_merkle_root(const rs_hash *leaves, size_t n, rs_hash *out)
{
    rs_hash l, r;
    size_t k;

    if (n == 0) {
        rs_sha256((const uint8_t *)"", 0, out->b);
        return;
    }
    if (n == 1) {
        *out = leaves[0];
        return;
    }
    k = split(n);
    rs_merkle_root(leaves, k, &l);
    rs_merkle_root(leaves + k, n - k, &r);
    rs_merkle_node(&l, &r, out);
}

void rs_hash_list_free(rs_hash_list *l)
{
    free(l->h);
    l->h = NULL;
    l->n = 0;
}

int rs_hash_list_push(rs_hash_list *l, const rs_hash *h, rs_error *err)
{
    rs_hash *grown = realloc(l->h, (l->n + 1) * sizeof(*grown));

    if (!grown)
        return rs_fail(err, "out of memory");
    l->h = grown;
    l->h[l->n++] = *h;
    return 0;
}

static int path(const rs_hash *d, size_t n, size_t m, rs_hash_list *out, rs_error *err)
{
    size_t k;
    rs_hash other;

    if (n <= 1)
        return 0;
    k = split(n);
    if (m < k) {
        rs_merkle_root(d + k, n - k, &other);
        return path(d, k, m, out, err) < 0 ? -1 : rs_hash_list_push(out, &other, err);
    }
    rs_merkle_root(d, k, &other);
    return path(d + k, n - k, m - k, out, err) < 0 ? -1 : rs_hash_list_push(out, &other, err);
}

int rs_merkle_inclusion_proof(const rs_hash *leaves, size_t size, size_t index, rs_hash_list *out, rs_error *err)
{
    memset(out, 0, sizeof(*out));
    if (index >= size)
        return rs_fail(err, "entry %zu is not in a tree of %zu entries", index, size);
    if (path(leaves, size, index, out, err) < 0) {
        rs_hash_list_free(out);
        return -1;
    }
    return 0;
}

static int subproof(const rs_hash *d, size_t n, size_t m, bool b, rs_hash_list *out, rs_error *err)
{
    size_t k;
    rs_hash h;

    if (m == n) {
        if (b)
            return 0;
        rs_merkle_root(d, n, &h);
        return rs_hash_list_push(out, &h, err);
    }
    k = split(n);
    if (m <= k) {
        rs_merkle_root(d + k, n - k, &h);
        return subproof(d, k, m, b, out, err) < 0 ? -1 : rs_hash_list_push(out, &h, err);
    }
    rs_merkle_root(d, k, &h);
    return subproof(d + k, n - k, m - k, false, out, err) < 0 ? -1 : rs_hash_list_push(out, &h, err);
}

int rs_merkle_consistency_proof(const rs_hash *leaves, size_t old_size, size_t new_size, rs_hash_list *out,
                                rs_error *err)
{
    memset(out, 0, sizeof(*out));
    if (old_size == 0 || old_size > new_size)
        return rs_fail(err, "no consistency proof from %zu to %zu entries", old_size, new_size);
    if (old_size < new_size && subproof(leaves, new_size, old_size, true, out, err) < 0) {
        rs_hash_list_free(out);
        return -1;
    }
    return 0;
}

static bool same(const rs_hash *a, const rs_hash *b)
{
    return memcmp(a->b, b->b, RS_HASH_LEN) == 0;
}

/* RFC 9162 §2.1.3.2, literally. */
bool rs_merkle_verify_inclusion(uint64_t index, uint64_t size, const rs_hash *leaf, const rs_hash_list *proof,
                                const rs_hash *root)
{
    uint64_t fn = index, sn = size - 1;
    rs_hash r = *leaf;

    if (index >= size)
        return false;
    for (size_t i = 0; i < proof->n; i++) {
        const rs_hash *p = &proof->h[i];

        if (sn == 0)
            return false;
        if ((fn & 1) || fn == sn) {
            rs_merkle_node(p, &r, &r);
            while (!(fn & 1) && fn != 0) {
                fn >>= 1;
                sn >>= 1;
            }
        } else {
            rs_merkle_node(&r, p, &r);
        }
        fn >>= 1;
        sn >>= 1;
    }
    return sn == 0 && same(&r, root);
}

/* RFC 9162 §2.1.4.2, literally. */
bool rs_merkle_verify_consistency(uint64_t old_size, uint64_t new_size, const rs_hash *old_root,
                                  const rs_hash *new_root, const rs_hash_list *proof)
{
    const rs_hash *c = proof->h;
    size_t n = proof->n;
    uint64_t fn, sn;
    rs_hash fr, sr;

    if (old_size == 0 || old_size > new_size)
        return false;
    if (old_size == new_size)
        return n == 0 && same(old_root, new_root);
    if (n == 0)
        return false;
    if ((old_size & (old_size - 1)) == 0) {
        fr = sr = *old_root;   /* the old root is a node of the new tree: the proof omits it */
    } else {
        fr = sr = c[0];
        c++, n--;
    }
    fn = old_size - 1;
    sn = new_size - 1;
    while (fn & 1) {
        fn >>= 1;
        sn >>= 1;
    }
    for (size_t i = 0; i < n; i++) {
        if (sn == 0)
            return false;
        if ((fn & 1) || fn == sn) {
            rs_merkle_node(&c[i], &fr, &fr);
            rs_merkle_node(&c[i], &sr, &sr);
            while (!(fn & 1) && fn != 0) {
                fn >>= 1;
                sn >>= 1;
            }
        } else {
            rs_merkle_node(&sr, &c[i], &sr);
        }
        fn >>= 1;
        sn >>= 1;
    }
    return sn == 0 && same(&fr, old_root) && same(&sr, new_root);
}

void rs_merkle_frontier_push(rs_merkle_frontier *f, const rs_hash *leaf)
{
    f->sub[f->count++] = *leaf;
    f->size++;
    /* Each trailing zero bit of the new size closes one perfect subtree. */
    for (uint64_t s = f->size; !(s & 1); s >>= 1) {
        rs_merkle_node(&f->sub[f->count - 2], &f->sub[f->count - 1], &f->sub[f->count - 2]);
        f->count--;
    }
}

void rs_merkle_frontier_root(const rs_merkle_frontier *f, rs_hash *out)
{
    if (f->count == 0) {
        rs_merkle_root(NULL, 0, out);
        return;
    }
    *out = f->sub[f->count - 1];
    for (unsigned i = f->count - 1; i-- > 0;)
        rs_merkle_node(&f->sub[i], out, out);
}

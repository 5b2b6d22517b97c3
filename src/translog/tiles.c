#include "translog/tiles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "crypto/ossl.h"

#define INDEX_TEXT_MAX 40   /* x018/x446/x744/x073/x709/x551/615 */

char *rs_tile_path(int level, uint64_t index, unsigned width)
{
    char n[INDEX_TEXT_MAX], *p = n + sizeof(n) - 1, *path = NULL;
    char lvl[8];
    int rc;

    /* Built from the right: the last group, then "xNNN/" before it. */
    *p = '\0';
    p -= 3;
    memcpy(p, (char[]){ (char)('0' + index / 100 % 10), (char)('0' + index / 10 % 10), (char)('0' + index % 10) }, 3);
    while (index >= 1000) {
        index /= 1000;
        p -= 5;
        memcpy(p, (char[]){ 'x', (char)('0' + index / 100 % 10), (char)('0' + index / 10 % 10),
                            (char)('0' + index % 10), '/' }, 5);
    }
    if (level == RS_TILE_ENTRIES)
        snprintf(lvl, sizeof(lvl), "entries");
    else
        snprintf(lvl, sizeof(lvl), "%d", level);
    if (width >= RS_TILE_WIDTH)
        rc = asprintf(&path, "tile/%s/%s", lvl, p);
    else
        rc = asprintf(&path, "tile/%s/%s.p/%u", lvl, p, width);
    return rc < 0 ? NULL : path;
}

void rs_checkpoint_free(rs_checkpoint *c)
{
    free(c->origin);
    memset(c, 0, sizeof(*c));
}

/* A decimal without sign, spaces or leading zeros, as tlog-checkpoint says. */
static bool parse_decimal(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 0;

    if (len == 0 || len > 20 || (len > 1 && s[0] == '0'))
        return false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

int rs_checkpoint_parse(const char *text, rs_checkpoint *out, rs_error *err)
{
    const char *l1 = strchr(text, '\n'), *l2 = l1 ? strchr(l1 + 1, '\n') : NULL, *l3 = l2 ? strchr(l2 + 1, '\n') : NULL;
    _cleanup_bytes_ rs_bytes root = { 0 };
    _cleanup_free_ char *b64 = NULL;

    memset(out, 0, sizeof(*out));
    if (!l3)
        return rs_fail(err, "a checkpoint has three lines: origin, size and root");
    if (l1 == text)
        return rs_fail(err, "a checkpoint without an origin");
    if (!parse_decimal(l1 + 1, (size_t)(l2 - l1 - 1), &out->size))
        return rs_fail(err, "a checkpoint whose size is not a decimal number");
    if (!(b64 = strndup(l2 + 1, (size_t)(l3 - l2 - 1))))
        return rs_fail(err, "out of memory");
    if (rs_base64_decode(b64, RS_HASH_LEN + 2, &root, err) < 0 || root.len != RS_HASH_LEN)
        return rs_fail(err, "a checkpoint whose root is not a base64 SHA-256 hash");
    memcpy(out->root.b, root.data, RS_HASH_LEN);
    if (!(out->origin = strndup(text, (size_t)(l1 - text))))
        return rs_fail(err, "out of memory");
    return 0;
}

char *rs_checkpoint_text(const char *origin, uint64_t size, const rs_hash *root)
{
    _cleanup_free_ char *b64 = rs_base64_encode(root->b, RS_HASH_LEN);
    char *text = NULL;

    if (!b64 || asprintf(&text, "%s\n%llu\n%s\n", origin, (unsigned long long)size, b64) < 0)
        return NULL;
    return text;
}

int rs_checkpoint_open(const char *msg, size_t len, const rs_note_key *vkey, rs_note *note, rs_checkpoint *out,
                       rs_error *err)
{
    bool found;

    memset(out, 0, sizeof(*out));
    if (rs_note_parse(msg, len, note, err) < 0)
        return -1;
    if (rs_note_check(note, vkey, &found, NULL, err) < 0 || rs_checkpoint_parse(note->text, out, err) < 0)
        goto fail;
    if (!found) {
        rs_fail(err, "the checkpoint carries no signature by the key %s", vkey->name);
        goto fail;
    }
    if (strcmp(out->origin, vkey->name)) {
        rs_fail(err, "the checkpoint's origin '%s' is not the key's name '%s'", out->origin, vkey->name);
        goto fail;
    }
    return 0;
fail:
    rs_note_free(note);
    rs_checkpoint_free(out);
    return -1;
}

void rs_tile_reader_free(rs_tile_reader *r)
{
    for (unsigned i = 0; i < RS_TILE_CACHE; i++)
        free(r->slot[i].hashes);
    memset(r->slot, 0, sizeof(r->slot));
}

unsigned rs_tile_width(uint64_t size, int level, uint64_t index)
{
    uint64_t avail = level <= 0 ? size : size >> (RS_TILE_HEIGHT * level);
    uint64_t first = index * RS_TILE_WIDTH;

    if (avail <= first)
        return 0;
    return avail - first >= RS_TILE_WIDTH ? RS_TILE_WIDTH : (unsigned)(avail - first);
}

int rs_tile_read_file(const char *dir, int level, uint64_t index, unsigned width, rs_bytes *out, rs_error *err)
{
    _cleanup_free_ char *rel = rs_tile_path(level, index, width), *path = NULL;
    size_t max = level == RS_TILE_ENTRIES ? (size_t)RS_BUNDLE_MAX : (size_t)width * RS_HASH_LEN;

    memset(out, 0, sizeof(*out));
    if (!rel || !(path = rs_path_join(dir, rel)))
        return rs_fail(err, "out of memory");
    if (rs_read_file(path, max, out, err) < 0)
        return rs_error_prefix(err, "%s", path);
    if (level != RS_TILE_ENTRIES && out->len != max) {
        rs_bytes_free(out);
        return rs_fail(err, "%s: a tile of %u hashes must be %zu bytes", path, width, max);
    }
    return 0;
}

static int cached_tile(rs_tile_reader *r, int level, uint64_t index, const rs_hash **out, rs_error *err)
{
    unsigned width = rs_tile_width(r->size, level, index);
    _cleanup_bytes_ rs_bytes b = { 0 };
    rs_tile_cache_slot *s;

    for (unsigned i = 0; i < RS_TILE_CACHE; i++) {
        s = &r->slot[i];
        if (s->hashes && s->level == level && s->index == index && s->width == width) {
            *out = s->hashes;
            return 0;
        }
    }
    if (width == 0)
        return rs_fail(err, "tile %d/%llu is beyond the tree of %llu entries", level, (unsigned long long)index,
                       (unsigned long long)r->size);
    if (rs_tile_read_file(r->dir, level, index, width, &b, err) < 0)
        return -1;
    r->reads++;
    s = &r->slot[r->next++ % RS_TILE_CACHE];
    free(s->hashes);
    *s = (rs_tile_cache_slot){ level, index, width, (rs_hash *)TAKE_PTR(b.data) };
    *out = s->hashes;
    return 0;
}

int rs_tile_node(rs_tile_reader *r, unsigned level, uint64_t index, rs_hash *out, rs_error *err)
{
    unsigned tl = level / RS_TILE_HEIGHT, sub = level % RS_TILE_HEIGHT;
    uint64_t first = index << sub, count = (uint64_t)1 << sub;
    const rs_hash *tile = NULL;

    if (level >= 64 || index >= (UINT64_MAX >> level) || ((index + 1) << level) > r->size)
        return rs_fail(err, "node %u/%llu is beyond the tree of %llu entries", level, (unsigned long long)index,
                       (unsigned long long)r->size);
    if (cached_tile(r, (int)tl, first / RS_TILE_WIDTH, &tile, err) < 0)
        return -1;
    rs_merkle_root(tile + first % RS_TILE_WIDTH, count, out);
    return 0;
}

static uint64_t split(uint64_t n)
{
    uint64_t k = 1;

    while (k < n - k)
        k <<= 1;
    return k;
}

int rs_tile_subtree(rs_tile_reader *r, uint64_t lo, uint64_t hi, rs_hash *out, rs_error *err)
{
    uint64_t n = hi - lo, k;
    rs_hash left, right;
    unsigned level = 0;

    if (n == 0)
        return rs_fail(err, "an empty subtree");
    if (n != 0 && (n & (n - 1)) == 0 && lo % n == 0) {   /* n != 0 again: for the analyzer */
        while (((uint64_t)1 << level) < n)
            level++;
        return rs_tile_node(r, level, lo >> level, out, err);
    }
    k = split(n);
    if (rs_tile_subtree(r, lo, lo + k, &left, err) < 0 || rs_tile_subtree(r, lo + k, hi, &right, err) < 0)
        return -1;
    rs_merkle_node(&left, &right, out);
    return 0;
}

/* RFC 6962 PATH(m, D[lo:lo+n]), leaf side first. */
static int path(rs_tile_reader *r, uint64_t lo, uint64_t n, uint64_t m, rs_hash_list *out, rs_error *err)
{
    uint64_t k;
    rs_hash other;

    if (n <= 1)
        return 0;
    k = split(n);
    if (m < k)
        return path(r, lo, k, m, out, err) < 0 || rs_tile_subtree(r, lo + k, lo + n, &other, err) < 0
                   ? -1
                   : rs_hash_list_push(out, &other, err);
    return path(r, lo + k, n - k, m - k, out, err) < 0 || rs_tile_subtree(r, lo, lo + k, &other, err) < 0
               ? -1
               : rs_hash_list_push(out, &other, err);
}

int rs_tile_inclusion(rs_tile_reader *r, uint64_t index, rs_hash_list *out, rs_error *err)
{
    memset(out, 0, sizeof(*out));
    if (index >= r->size)
        return rs_fail(err, "entry %llu is not in the tree of %llu entries", (unsigned long long)index,
                       (unsigned long long)r->size);
    if (path(r, 0, r->size, index, out, err) < 0) {
        rs_hash_list_free(out);
        return -1;
    }
    return 0;
}

/* RFC 6962 SUBPROOF(m, D[lo:lo+n], b). */
static int subproof(rs_tile_reader *r, uint64_t lo, uint64_t n, uint64_t m, bool b, rs_hash_list *out, rs_error *err)
{
    uint64_t k;
    rs_hash h;

    if (m == n)
        return b ? 0 : rs_tile_subtree(r, lo, lo + n, &h, err) < 0 ? -1 : rs_hash_list_push(out, &h, err);
    k = split(n);
    if (m <= k)
        return subproof(r, lo, k, m, b, out, err) < 0 || rs_tile_subtree(r, lo + k, lo + n, &h, err) < 0
                   ? -1
                   : rs_hash_list_push(out, &h, err);
    return subproof(r, lo + k, n - k, m - k, false, out, err) < 0 || rs_tile_subtree(r, lo, lo + k, &h, err) < 0
               ? -1
               : rs_hash_list_push(out, &h, err);
}

int rs_tile_consistency(rs_tile_reader *r, uint64_t old_size, rs_hash_list *out, rs_error *err)
{
    memset(out, 0, sizeof(*out));
    if (old_size == 0 || old_size > r->size)
        return rs_fail(err, "no consistency proof from %llu to %llu entries", (unsigned long long)old_size,
                       (unsigned long long)r->size);
    if (old_size < r->size && subproof(r, 0, r->size, old_size, true, out, err) < 0) {
        rs_hash_list_free(out);
        return -1;
    }
    return 0;
}

int rs_bundle_split(const uint8_t *data, size_t len, unsigned count, size_t *offs, size_t *lens, rs_error *err)
{
    size_t pos = 0;

    for (unsigned i = 0; i < count; i++) {
        size_t n;

        if (len - pos < 2)
            return rs_fail(err, "the bundle ends before entry %u of %u", i, count);
        n = (size_t)data[pos] << 8 | data[pos + 1];
        pos += 2;
        if (len - pos < n)
            return rs_fail(err, "entry %u of the bundle runs past its end", i);
        offs[i] = pos;
        lens[i] = n;
        pos += n;
    }
    if (pos != len)
        return rs_fail(err, "the bundle has %zu bytes after its %u entries", len - pos, count);
    return 0;
}

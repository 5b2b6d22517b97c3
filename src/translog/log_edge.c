/* The right edge of the tree in memory: what appending needs of the tiles
 * already written, read when the log is opened (log_open.c) and again when
 * an append fails and must go back to what the disk holds (log.c). */
#include <string.h>

#include "base/cleanup.h"
#include "translog/log_internal.h"
#include "translog/tiles.h"

/* The right edge of every tile level: the hashes after the last full tile. */
static int load_edge_tiles(rs_translog *l, rs_error *err)
{
    _cleanup_bytes_ rs_bytes b = { 0 };

    memset(l->edge_n, 0, sizeof(l->edge_n));
    for (unsigned t = 0; t < RS_TILE_LEVELS; t++) {
        uint64_t count = l->size >> (RS_TILE_HEIGHT * t);
        unsigned w = (unsigned)(count % RS_TILE_WIDTH);

        if (w == 0)
            continue;
        if (rs_tile_read_file(l->dir, (int)t, count / RS_TILE_WIDTH, w, &b, err) < 0)
            return -1;
        memcpy(l->edge[t], b.data, w * sizeof(rs_hash));
        l->edge_n[t] = w;
        rs_bytes_free(&b);
    }
    return 0;
}

/* The partial last entry bundle, each entry checked against its leaf. */
static int load_last_bundle(rs_translog *l, rs_error *err)
{
    _cleanup_bytes_ rs_bytes b = { 0 };
    unsigned w = (unsigned)(l->size % RS_TILE_WIDTH);
    size_t offs[RS_TILE_WIDTH], lens[RS_TILE_WIDTH];
    rs_hash got;

    l->bundle.len = 0;
    if (w == 0)
        return 0;
    if (rs_tile_read_file(l->dir, RS_TILE_ENTRIES, l->size / RS_TILE_WIDTH, w, &b, err) < 0 ||
        rs_bundle_split(b.data, b.len, w, offs, lens, err) < 0)
        return rs_error_prefix(err, "%s: the last entry bundle", l->dir);
    for (unsigned i = 0; i < w; i++) {
        if (rs_merkle_leaf(b.data + offs[i], lens[i], &got, err) < 0)
            return -1;
        if (memcmp(&got, &l->edge[0][i], sizeof(got)))
            return rs_fail(err, "%s: entry %llu does not match its tile", l->dir,
                           (unsigned long long)(l->size - w + i));
    }
    return rs_bytes_set(&l->bundle, b.data, b.len, err);
}

/* The frontier: one perfect subtree per bit of the size, largest first. */
static int load_frontier(rs_translog *l, rs_error *err)
{
    _cleanup_(rs_tile_reader_free) rs_tile_reader r = { .dir = l->dir, .size = l->size };

    memset(&l->frontier, 0, sizeof(l->frontier));
    for (unsigned bit = 64; bit-- > 0;) {
        if (!((l->size >> bit) & 1))
            continue;
        if (rs_tile_node(&r, bit, (l->size >> bit) - 1, &l->frontier.sub[l->frontier.count++], err) < 0)
            return rs_error_prefix(err, "%s", l->dir);
    }
    l->frontier.size = l->size;
    return 0;
}

int rs_log_load_edge(rs_translog *l, const rs_hash *root, rs_error *err)
{
    rs_hash got;

    if (load_edge_tiles(l, err) < 0 || load_last_bundle(l, err) < 0 || load_frontier(l, err) < 0)
        return -1;
    rs_merkle_frontier_root(&l->frontier, &got);
    if (root && memcmp(&got, root, sizeof(got)))
        return rs_fail(err, "%s: the tiles' root does not match the checkpoint's", l->dir);
    return 0;
}

/* The static files of a c2sp.org/tlog-tiles log and reading them:
 *
 *   checkpoint                  a c2sp.org/tlog-checkpoint signed note
 *   tile/<L>/<N>[.p/<W>]        hash tiles, height 8: tile N of level L holds
 *                               the hashes of tree level 8L, 32 bytes each
 *   tile/entries/<N>[.p/<W>]    entry bundles: each entry a big-endian
 *                               uint16 length and the entry's bytes
 *
 * N is written in groups of three digits, all but the last prefixed
 * with "x" (1234067 → x001/x234/067); a partial tile of W < 256 hashes
 * carries ".p/W". Hashing is RFC 6962's (translog/merkle.h). Reading a
 * node costs one tile, so proofs cost O(log n) small files. */
#ifndef RS_TILES_H
#define RS_TILES_H

#include <stdbool.h>
#include <stdint.h>

#include "base/bytes.h"
#include "translog/merkle.h"
#include "translog/note.h"

#define RS_TILE_HEIGHT 8
#define RS_TILE_WIDTH 256
#define RS_TILE_LEVELS 8          /* 8 levels of 8 cover a 64-bit tree size */
#define RS_TILE_ENTRIES (-1)      /* the level argument naming entry bundles */
/* An entry's length is a uint16; our entries are a few hundred bytes. */
#define RS_ENTRY_MAX 65535
/* A bundle of 256 entries of at most 64 KiB each. */
#define RS_BUNDLE_MAX (RS_TILE_WIDTH * (2 + RS_ENTRY_MAX))
/* What a log publishes (its directory, checkpoint, tile/ and leaf-index/)
 * is readable by all on purpose, whatever the writer's umask; its lock
 * stays the writer's own. */
#define RS_LOG_FILE_MODE 0644
#define RS_LOG_DIR_MODE 0755

/* "tile/<level>/<N>[.p/<width>]" relative to the log directory (width 256:
 * a full tile); level RS_TILE_ENTRIES names a bundle. */
char *rs_tile_path(int level, uint64_t index, unsigned width);

typedef struct rs_checkpoint {
    char *origin;
    uint64_t size;
    rs_hash root;
} rs_checkpoint;

void rs_checkpoint_free(rs_checkpoint *c);
/* The checkpoint's note text: origin, size, base64 root, each on a line
 * (further lines, extensions, are allowed and ignored). */
int rs_checkpoint_parse(const char *text, rs_checkpoint *out, rs_error *err);
char *rs_checkpoint_text(const char *origin, uint64_t size, const rs_hash *root);
/* Parses a signed checkpoint and checks it is signed by vkey under the
 * origin that is vkey's name. */
int rs_checkpoint_open(const char *msg, size_t len, const rs_note_key *vkey, rs_note *note, rs_checkpoint *out,
                       rs_error *err);

/* Reads the tiles of the tree of `size` entries in dir, caching a few. */
typedef struct rs_tile_cache_slot {
    int level;
    uint64_t index;
    unsigned width;
    rs_hash *hashes;
} rs_tile_cache_slot;

#define RS_TILE_CACHE 16

typedef struct rs_tile_reader {
    const char *dir;
    uint64_t size;
    rs_tile_cache_slot slot[RS_TILE_CACHE];
    unsigned next;
    uint64_t reads;    /* tiles read from disk, for the tests of O(log n) */
} rs_tile_reader;

void rs_tile_reader_free(rs_tile_reader *r);
/* The width of tile `index` of `level` in a tree of r->size entries. */
unsigned rs_tile_width(uint64_t size, int level, uint64_t index);
/* Reads a whole tile or bundle file that must be exactly as described. */
int rs_tile_read_file(const char *dir, int level, uint64_t index, unsigned width, rs_bytes *out, rs_error *err);
/* The hash of the node at tree level `level`, index `index`. */
int rs_tile_node(rs_tile_reader *r, unsigned level, uint64_t index, rs_hash *out, rs_error *err);
/* MTH of the leaves [lo, hi). */
int rs_tile_subtree(rs_tile_reader *r, uint64_t lo, uint64_t hi, rs_hash *out, rs_error *err);
int rs_tile_inclusion(rs_tile_reader *r, uint64_t index, rs_hash_list *out, rs_error *err);
int rs_tile_consistency(rs_tile_reader *r, uint64_t old_size, rs_hash_list *out, rs_error *err);

/* Splits a bundle into its entries: offsets (of the data, after the
 * length) and lengths; exactly `count` entries must fill it. */
int rs_bundle_split(const uint8_t *data, size_t len, unsigned count, size_t *offs, size_t *lens, rs_error *err);

#endif

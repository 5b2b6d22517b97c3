/* Reading Debian binary packages in place with libarchive: the ar
 * container, the control fields, and the data tarball streamed entry by
 * entry. Nothing is unpacked to disk; file contents go to memfds. */
#ifndef RS_DEB_H
#define RS_DEB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/strpool.h"

typedef struct rs_deb_control {
    char *package;
    char *version;
    char *architecture;
    char *source;        /* Source: without "(version)"; the package's name when absent */
} rs_deb_control;

/* Whether the file starts as an ar archive, as every .deb does. */
bool rs_deb_has_magic(const char *path);

int rs_deb_read_control(const char *path, rs_deb_control *out, rs_error *err);
void rs_deb_control_free(rs_deb_control *c);

typedef enum { RS_NODE_FILE, RS_NODE_DIR, RS_NODE_SYMLINK, RS_NODE_HARDLINK, RS_NODE_OTHER } rs_node_type;

typedef struct rs_deb_entry {
    char *name;          /* normalised: no "./", no trailing "/" */
    rs_node_type type;
    char *link;          /* symlink target, or hardlink target (normalised) */
    uint64_t size;
} rs_deb_entry;

/* What an index may hold. Its entries are kept in memory, and a few KB of
 * xz can stand for millions of tar headers: a package past either limit
 * is refused. A kernel image package, the largest that is signed, lists
 * 1,400 to 5,000 entries in 0.1 to 0.4 MB of names; the package with the
 * most files in all of Debian (piglit: 51,784 in bullseye's
 * Contents-amd64, paths of about 100 bytes) is a tenth of the first
 * limit and a fifth of the second. A run whose package meets both limits
 * peaks at 57 MiB (tests/interop/test_deb_limits.sh). */
#define RS_DEB_INDEX_MAX_ENTRIES 500000
#define RS_DEB_INDEX_MAX_NAME_BYTES (24u * 1024 * 1024)   /* names and link targets, summed */

typedef struct rs_deb_index {
    rs_deb_entry *entries;   /* sorted by name */
    size_t count;
    rs_strpool names;        /* holds every entry's name and link */
    size_t name_bytes;
    bool complete;           /* false when a walk stopped early: a name not
                              * found may come later in the tarball */
} rs_deb_index;

/* Lists the data tarball's entries (metadata only). */
int rs_deb_index_read(const char *path, rs_deb_index *out, rs_error *err);
void rs_deb_index_free(rs_deb_index *idx);
const rs_deb_entry *rs_deb_index_find(const rs_deb_index *idx, const char *name);
/* Whether any entry lies beneath the directory `name` (a tarball need not
 * list a file's directories). */
bool rs_deb_index_has_beneath(const rs_deb_index *idx, const char *name);

/* Streams the data tarball; for every regular entry whose name `want`
 * accepts, hands a sealed memfd holding its bytes to `take`, which owns it.
 * Returning < 0 from either stops the walk with that error; `take`
 * returning RS_DEB_STOP stops it as done, leaving the rest undecoded. */
#define RS_DEB_STOP 1
typedef bool (*rs_deb_want)(void *ctx, const char *name);
typedef int (*rs_deb_take)(void *ctx, const char *name, int fd, uint64_t size, rs_error *err);
int rs_deb_stream(const char *path, rs_deb_want want, rs_deb_take take, void *ctx, rs_error *err);
/* Both in one walk: lists every entry into *index, as rs_deb_index_read
 * does, while streaming the wanted files. A compressed data.tar costs
 * more to decompress than anything done with its contents, so it is
 * better read once. */
int rs_deb_stream_indexed(const char *path, rs_deb_index *index, rs_deb_want want, rs_deb_take take, void *ctx,
                          rs_error *err);

/* What one extraction may write: a package is untrusted, and a few KB of
 * xz can stand for gigabytes or millions of entries. */
typedef struct rs_extract_limits {
    uint64_t bytes;     /* file contents, summed */
    size_t entries;     /* files and directories */
} rs_extract_limits;

/* Extracts every regular file, directory and symlink under `prefix` into
 * `dest` (used for a template's source-template/). Refuses hard links and
 * special files, anything that would land outside dest or be written
 * through a symlink, and trees over `limits`. Symlink targets are left to
 * the copy into the source package to check. */
int rs_deb_extract_tree(const char *path, const char *prefix, const char *dest, const rs_extract_limits *limits,
                        rs_error *err);

/* "./a/b/" -> "a/b" in place. */
void rs_deb_normalise(char *name);

#endif

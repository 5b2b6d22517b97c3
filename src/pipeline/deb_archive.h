/* The .deb container as libarchive reads it, shared by the readers of
 * pipeline/deb.c and the extraction of pipeline/deb_extract.c: the ar
 * archive, the tarball inside a member, and a walk over data.tar. */
#ifndef RS_DEB_ARCHIVE_H
#define RS_DEB_ARCHIVE_H

#include <stdint.h>

#include "base/error.h"
#include "pipeline/archive_lib.h"
#include "pipeline/deb.h"

/* Reads the ar container; NULL with err set when it is not one. */
struct archive *rs_deb_open_ar(const char *path, rs_error *err);
/* Positions `outer` at the member whose name starts with prefix
 * ("data.tar", "control.tar") and opens it as a tarball. */
struct archive *rs_deb_open_member_tar(struct archive *outer, const char *prefix, rs_error *err);
void rs_deb_archive_freep(struct archive **a);
#define _cleanup_archive_ __attribute__((cleanup(rs_deb_archive_freep)))

int rs_deb_archive_fail(rs_error *err, struct archive *a, const char *what);

/* Calls fn for every entry of the data tarball, with its normalised
 * name; fn may read the entry's data. Stops at fn's first failure, or
 * when fn returns RS_DEB_STOP (then returns RS_DEB_STOP). */
typedef int (*rs_deb_entry_fn)(void *ctx, struct archive *data, struct archive_entry *e, const char *name,
                               rs_error *err);
int rs_deb_walk_data(const char *path, rs_deb_entry_fn fn, void *ctx, rs_error *err);

rs_node_type rs_deb_entry_type(struct archive_entry *e);
/* Copies the current entry's data into fd, up to `limit` bytes: a .deb's
 * file, or a decompressed stream (libarchive's raw format). A write that
 * fails names `to`, the file fd writes (a disk that is full), or says the
 * buffer in memory when `to` is NULL; bad data is "corrupt STREAM". */
int rs_archive_copy_data(struct archive *a, int fd, const char *to, uint64_t limit, const char *stream, uint64_t *size,
                         rs_error *err);
/* The loop under it: each block of the current entry's data, at its offset,
 * to fn, up to `limit` bytes in all; *size is where the data ends. */
typedef int (*rs_archive_block_fn)(void *ctx, uint64_t off, const void *data, size_t len, rs_error *err);
int rs_archive_each_block(struct archive *a, uint64_t limit, const char *stream, rs_archive_block_fn fn, void *ctx,
                          uint64_t *size, rs_error *err);

#endif

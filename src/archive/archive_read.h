/* Reading with libarchive, shared by the .deb readers (pipeline/) and the
 * decompressor (archive/decompress.h): freeing a reader, its errors, and
 * the loop over the current entry's data. */
#ifndef RS_ARCHIVE_READ_H
#define RS_ARCHIVE_READ_H

#include <stdint.h>

#include "archive/archive_lib.h"
#include "base/error.h"

void rs_archive_freep(struct archive **a);
#define _cleanup_archive_ __attribute__((cleanup(rs_archive_freep)))

/* "WHAT: libarchive's reason". Returns -1. */
int rs_archive_fail(rs_error *err, struct archive *a, const char *what);

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

/* Opens the current entry's data of `outer` as a tarball, read straight
 * from it (nothing unpacked): a .deb's data.tar, a tarball inside a
 * tarball. Only dpkg's compressors are tried ("all" includes filters that
 * run an external program on the bytes). NULL with err ("WHAT: reason")
 * when the data is not a tarball; outer then goes on to its next entry. */
struct archive *rs_archive_open_entry_tar(struct archive *outer, const char *what, rs_error *err);

#endif

/* A compressed file (xz, zstd or gzip, as Linux compresses its modules:
 * name.ko.xz and so on), decompressed into a sealed memfd. The kernel
 * (or kmod) verifies a compressed module's signature on the decompressed
 * bytes, so that is what a check of it must read. A kernel image's
 * compressed payload, which holds its built-in keys, is read the same way. */
#ifndef RS_DECOMPRESS_H
#define RS_DECOMPRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/file.h"

/* Bounds memory for a hostile stream. Debian trixie's largest module
 * (amdgpu.ko, 6.12) is 29.7 MB decompressed: this is 17 times that. The
 * largest kernel here, bookworm's amd64 vmlinux (6.1), is 65.9 MB
 * decompressed from its bzImage: this is 8 times that. */
#define RS_MAX_DECOMPRESSED (512ull * 1024 * 1024)

/* Whether NAME ends as a compressed kernel module does (.ko.xz, .ko.zst, .ko.gz). */
bool rs_is_compressed_module_name(const char *name);

/* Decompresses PATH into a new sealed memfd (*fd, *size). A file that is
 * not compressed, or is corrupt, or decompresses past `limit` bytes
 * (RS_MAX_DECOMPRESSED), is an error naming the reason. */
int rs_decompress_to_memfd(const char *path, uint64_t limit, int *fd, uint64_t *size, rs_error *err);
/* The same for an open input whose name says nothing (a member of a
 * package, judged by its bytes): RS_NOT_COMPRESSED, with nothing done and
 * no error, when it is not compressed. */
#define RS_NOT_COMPRESSED 1
int rs_decompress_input_to_memfd(const rs_input *in, uint64_t limit, int *fd, uint64_t *size, rs_error *err);
/* Decompresses the stream at [off, off+len) of an open input (a kernel
 * image's payload), read from it a block at a time, and gives fn the
 * decompressed bytes in order, a block at a time: nothing holds them all.
 * *size is how many there were. Errors are those above; fn's own end it. */
typedef int (*rs_decompress_fn)(void *ctx, const uint8_t *data, size_t len, rs_error *err);
int rs_decompress_range_each(const rs_input *in, uint64_t off, uint64_t len, uint64_t limit, rs_decompress_fn fn,
                             void *ctx, uint64_t *size, rs_error *err);

#endif

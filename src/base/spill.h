/* A spill: an unnamed temporary file that holds what a job must keep for
 * every one of its files between two passes, so that its memory stays the
 * same whatever the number of files. It lives in $TMPDIR (else /tmp),
 * opened with O_TMPFILE, so nothing is left behind however the process
 * ends. */
#ifndef RS_SPILL_H
#define RS_SPILL_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

typedef struct rs_spill {
    int fd;
    uint64_t size;
} rs_spill;

#define RS_SPILL_INIT { .fd = -1 }

int rs_spill_open(rs_spill *s, rs_error *err);
/* Adds n bytes at the end; *at (if not NULL) is where they start. */
int rs_spill_append(rs_spill *s, const void *data, size_t n, uint64_t *at, rs_error *err);
/* Reads or rewrites n bytes at at, which must lie within what was appended. */
int rs_spill_read(const rs_spill *s, uint64_t at, void *data, size_t n, rs_error *err);
int rs_spill_write(rs_spill *s, uint64_t at, const void *data, size_t n, rs_error *err);
void rs_spill_close(rs_spill *s);

#endif

/* The .deb container as libarchive reads it, shared by the readers of
 * pipeline/deb.c and the extraction of pipeline/deb_extract.c: the ar
 * archive, the tarball inside a member, and a walk over data.tar. */
#ifndef RS_DEB_ARCHIVE_H
#define RS_DEB_ARCHIVE_H

#include <stdint.h>

#include "archive/archive_read.h"
#include "base/error.h"
#include "pipeline/deb.h"

/* Reads the ar container; NULL with err set when it is not one. */
struct archive *rs_deb_open_ar(const char *path, rs_error *err);
/* Positions `outer` at the member whose name starts with prefix
 * ("data.tar", "control.tar") and opens it as a tarball. */
struct archive *rs_deb_open_member_tar(struct archive *outer, const char *prefix, rs_error *err);
/* Calls fn for every entry of the data tarball, with its normalised
 * name; fn may read the entry's data. Stops at fn's first failure, or
 * when fn returns RS_DEB_STOP (then returns RS_DEB_STOP). */
typedef int (*rs_deb_entry_fn)(void *ctx, struct archive *data, struct archive_entry *e, const char *name,
                               rs_error *err);
int rs_deb_walk_data(const char *path, rs_deb_entry_fn fn, void *ctx, rs_error *err);

rs_node_type rs_deb_entry_type(struct archive_entry *e);
#endif

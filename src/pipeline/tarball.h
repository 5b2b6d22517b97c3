/* Deterministic tarballs: the same tree gives the same bytes, whoever
 * builds it and whenever. Entries sorted, owner root 0/0, modes 0755/0644,
 * one fixed mtime, no atime/ctime, xz-compressed. */
#ifndef RS_TARBALL_H
#define RS_TARBALL_H

#include <time.h>

#include "base/error.h"

/* Packs the contents of dir (entries relative to it) into output. */
int rs_tarball_write(const char *dir, const char *output, time_t mtime, rs_error *err);

#endif

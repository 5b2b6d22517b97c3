/* Debian version numbers ([epoch:]upstream[-revision], Debian policy
 * 5.6.12) compared in dpkg's order, as dak and apt compare them: the
 * service uploads a -signed version only when it is newer than the last
 * one it published for that source (docs/security.md). */
#ifndef RS_DEBVERSION_H
#define RS_DEBVERSION_H

#include "base/error.h"

/* *cmp < 0, 0 or > 0 as a sorts before, with or after b. A version dpkg
 * refuses (an empty one, a bad epoch, an empty upstream or revision, a
 * character outside [A-Za-z0-9.+~:-]) is an error naming it. */
int rs_debversion_compare(const char *a, const char *b, int *cmp, rs_error *err);

#endif

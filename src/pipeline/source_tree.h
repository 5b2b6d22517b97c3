/* Copying a template's source-template/ into the source package tree. */
#ifndef RS_SOURCE_TREE_H
#define RS_SOURCE_TREE_H

#include <stdbool.h>

#include "base/error.h"

/* Copies regular files and directories, never following a link. A
 * relative symlink whose target resolves to an existing name inside
 * `from` is carried as a symlink; an absolute, escaping or dangling one
 * is refused, naming the link and its target. Other special files are
 * refused. Files are streamed, each at most RS_MAX_SOURCE_FILE bytes. */
int rs_copy_source_tree(const char *from, const char *to, rs_error *err);

/* Would a symlink at `link_rel` (relative to the template root) with
 * `target` stay inside the template by its names alone? */
bool rs_symlink_stays_inside(const char *link_rel, const char *target);

#endif

/* A Packages index searched without holding it in memory. */
#ifndef RS_REPO_SCAN_H
#define RS_REPO_SCAN_H

#include "service/repo.h"

/* Finds package at version for arch (or "all") in the Packages file at
 * path, which must have the size and SHA-256 f lists; *found says whether
 * it is there. Errors name path. */
int rs_packages_scan(const char *path, const rs_release_file *f, const char *package, const char *version,
                     const char *arch, rs_repo_package *out, bool *found, rs_error *err);

#endif

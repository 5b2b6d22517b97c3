/* Source binding: a signing template signs its own source's binaries and
 * no one else's. Without it, a template uploaded by the maintainer of
 * source foo could have the key sign victim-unsigned, built from source
 * victim (docs/security.md). */
#ifndef RS_SOURCE_BINDING_H
#define RS_SOURCE_BINDING_H

#include <stddef.h>

#include "base/error.h"
#include "pipeline/pkgtree.h"

/* The sources, besides its own, whose binaries a template may name: an
 * explicit allowlist, from the service's configuration. */
typedef struct rs_foreign_sources {
    const char *const *names;
    size_t n;
} rs_foreign_sources;

/* Checks that package (read from tree) comes from template_source or an
 * allowed foreign source. Either source unknown (a bare files.json, an
 * unpacked root without control data) leaves nothing to compare. */
int rs_check_source_binding(const char *template_source, const char *package, const rs_pkgtree *tree,
                            const rs_foreign_sources *allowed, rs_error *err);

#endif

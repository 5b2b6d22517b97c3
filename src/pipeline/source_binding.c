#include "pipeline/source_binding.h"

#include <string.h>

int rs_check_source_binding(const char *template_source, const char *package, const rs_pkgtree *tree,
                            const rs_foreign_sources *allowed, rs_error *err)
{
    if (!template_source || !tree->source || !strcmp(template_source, tree->source))
        return 0;
    for (size_t i = 0; allowed && i < allowed->n; i++)
        if (!strcmp(allowed->names[i], tree->source))
            return 0;
    return rs_fail(err, "package %s (%s) is built from source %s, not from the template's source %s; a template "
                        "signs only its own source's binaries",
                   package, tree->origin, tree->source, template_source);
}

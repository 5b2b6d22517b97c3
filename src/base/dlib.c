#include "base/dlib.h"

#include <dlfcn.h>
#include <stdio.h>

/* pthread_once passes no argument; the library being loaded is handed
 * over through this, under the once-lock each rs_dlib has. */
static __thread rs_dlib *loading;

static void load(void)
{
    rs_dlib *lib = loading;
    /* Lazy: the library's own calls bind when first made; every symbol
     * reprosign uses is looked up below, so a missing one is still found
     * here, before any work. */
    void *handle = dlopen(lib->soname, RTLD_LAZY | RTLD_LOCAL);

    if (!handle) {
        snprintf(lib->error, sizeof(lib->error), "cannot load %s (install %s): %s", lib->soname, lib->package,
                 dlerror());
        return;
    }
    for (size_t i = 0; i < lib->count; i++)
        if (!(*lib->slots[i] = dlsym(handle, lib->names[i]))) {
            snprintf(lib->error, sizeof(lib->error), "%s lacks %s", lib->soname, lib->names[i]);
            return;
        }
}

int rs_dlib_load(rs_dlib *lib, rs_error *err)
{
    loading = lib;
    pthread_once(&lib->once, load);
    loading = NULL;
    return lib->error[0] ? rs_fail(err, "%s", lib->error) : 0;
}

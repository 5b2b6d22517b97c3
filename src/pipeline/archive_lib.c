#include "pipeline/archive_lib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define LIBARCHIVE_SONAME "libarchive.so.13"

#define RS_ARCHIVE_DEFINE(name) __typeof__(name) *sym_##name;
RS_ARCHIVE_SYMBOLS(RS_ARCHIVE_DEFINE)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[256];

#define RS_ARCHIVE_RESOLVE(name)                                                              \
    if (!load_error[0] && !(*(void **)&sym_##name = dlsym(lib, #name)))                        \
        snprintf(load_error, sizeof(load_error), "%s lacks %s", LIBARCHIVE_SONAME, #name);

static void load(void)
{
    void *lib = dlopen(LIBARCHIVE_SONAME, RTLD_NOW | RTLD_LOCAL);

    if (!lib) {
        snprintf(load_error, sizeof(load_error), "cannot load %s (install libarchive13): %s", LIBARCHIVE_SONAME,
                 dlerror());
        return;
    }
    RS_ARCHIVE_SYMBOLS(RS_ARCHIVE_RESOLVE)
    /* Never unloaded: the pointers stay valid for the process. */
}

int rs_archive_load(rs_error *err)
{
    pthread_once(&once, load);
    return load_error[0] ? rs_fail(err, "%s", load_error) : 0;
}

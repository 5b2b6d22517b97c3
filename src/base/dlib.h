/* Optional libraries loaded on first use. A linked library costs every
 * process its start-up (mapping, relocations) even when the command never
 * calls it; the heavy ones that only a few commands need (libarchive for
 * .deb files, SQLite for the service) are resolved here instead. Callers
 * declare typed pointers, sym_<name>, from the library's own prototypes. */
#ifndef RS_DLIB_H
#define RS_DLIB_H

#include <pthread.h>
#include <stddef.h>

#include "base/error.h"

typedef struct rs_dlib {
    const char *soname;
    const char *package;          /* the Debian package that ships it */
    const char *const *names;
    void **const *slots;
    size_t count;
    pthread_once_t once;
    char error[256];
} rs_dlib;

/* Loads the library once per process (thread-safe) and fills every slot;
 * the library is never unloaded. Fails naming the library and package. */
int rs_dlib_load(rs_dlib *lib, rs_error *err);

/* Helpers for an X-macro list of symbols. */
#define RS_DLIB_DECLARE(name) extern __typeof__(name) *sym_##name;
#define RS_DLIB_DEFINE(name) __typeof__(name) *sym_##name;
#define RS_DLIB_NAME(name) #name,
#define RS_DLIB_SLOT(name) (void **)&sym_##name,

/* Defines the sym_ pointers of an X-macro symbol list and `int load(rs_error
 * *)`, which loads the library once per process and fills them. */
#define RS_DLIB_LIBRARY(load, so, pkg, SYMBOLS)                                    \
    SYMBOLS(RS_DLIB_DEFINE)                                                        \
    int load(rs_error *err)                                                        \
    {                                                                              \
        static const char *const names[] = { SYMBOLS(RS_DLIB_NAME) };              \
        static void **const slots[] = { SYMBOLS(RS_DLIB_SLOT) };                   \
        static rs_dlib lib = { .soname = so, .package = pkg, .names = names,       \
                               .slots = slots,                                     \
                               .count = sizeof(names) / sizeof(names[0]),          \
                               .once = PTHREAD_ONCE_INIT };                        \
        return rs_dlib_load(&lib, err);                                            \
    }

#endif

/* Scope-bound cleanup, after systemd's _cleanup_ idiom.
 *
 * Every owning local carries its release function, so early returns on
 * error paths cannot leak. Ownership is handed on with TAKE_PTR(). */
#ifndef RS_CLEANUP_H
#define RS_CLEANUP_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

#define TAKE_PTR(p)                         \
    ({                                      \
        __typeof__(p) _taken_ = (p);        \
        (p) = NULL;                         \
        _taken_;                            \
    })

#define TAKE_FD(fd)                         \
    ({                                      \
        int _taken_fd_ = (fd);              \
        (fd) = -1;                          \
        _taken_fd_;                         \
    })

/* Declares `static inline void name(type **p)` that calls func(*p) when set. */
#define DEFINE_POINTER_CLEANUP(name, type, func) \
    static inline void name(type **p)            \
    {                                            \
        if (*p)                                  \
            func(*p);                            \
    }

static inline void rs_freep(void *p)
{
    free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(rs_freep)

static inline void rs_closep(int *fd)
{
    if (*fd >= 0)
        close(*fd);
}
#define _cleanup_close_ _cleanup_(rs_closep)

static inline void rs_closedirp(DIR **d)
{
    if (*d)
        closedir(*d);
}

static inline void rs_fclosep(FILE **f)
{
    if (*f)
        fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(rs_fclosep)

#endif

/* Errors are values: a library function that fails fills an rs_error and
 * returns -1. Only the CLI prints them, once, prefixed with the file. */
#ifndef RS_ERROR_H
#define RS_ERROR_H

#include <stdarg.h>
#include <stdbool.h>

#define RS_ERROR_MAX 1024

typedef struct rs_error {
    char msg[RS_ERROR_MAX];
    /* The failure may pass by itself: worth trying again later. Prefixing
     * keeps it. RS_TRANSIENT_IO: the archive unreachable or incomplete, or
     * a disk full (rs_fail_sys);
     * RS_TRANSIENT_TOKEN: a key's token failed to sign. */
    int transient;
} rs_error;

enum { RS_TRANSIENT_IO = 1, RS_TRANSIENT_TOKEN = 2 };

/* Sets the message and returns -1 so callers can `return rs_fail(...)`. */
int rs_fail(rs_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same for a failure that may pass by itself: why is RS_TRANSIENT_IO
 * or RS_TRANSIENT_TOKEN. */
int rs_fail_transient(rs_error *err, int why, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* As rs_fail, for a system call that failed with errnum (the message
 * gives its reason): a disk or a quota that is full (ENOSPC, EDQUOT) passes
 * once room is made, so the failure is RS_TRANSIENT_IO; any other is not. */
int rs_fail_sys(rs_error *err, int errnum, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* As rs_fail, appending OpenSSL's most recent reason (and clearing its queue). */
int rs_fail_ssl(rs_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prepends "context: " to an existing message. Returns -1. */
int rs_error_prefix(rs_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The static analyzer (scan-build, in CI) reads one file at a time and
 * cannot see that these always return -1; without this it follows paths
 * where a failure returned 0 and reports what it finds there. */
#if defined(__clang_analyzer__) && !defined(RS_ERROR_IMPL)
#define rs_fail(err, ...) (rs_fail(err, __VA_ARGS__), -1)
#define rs_fail_transient(err, why, ...) (rs_fail_transient(err, why, __VA_ARGS__), -1)
#define rs_fail_ssl(err, ...) (rs_fail_ssl(err, __VA_ARGS__), -1)
#define rs_fail_sys(err, errnum, ...) (rs_fail_sys(err, errnum, __VA_ARGS__), -1)
#define rs_error_prefix(err, ...) (rs_error_prefix(err, __VA_ARGS__), -1)
#endif

#endif

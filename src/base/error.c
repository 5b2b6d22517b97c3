#define RS_ERROR_IMPL   /* defines the functions the analyzer sees as macros (error.h) */
#include "base/error.h"

#include <errno.h>
#include <openssl/err.h>
#include <stdio.h>
#include <string.h>

__attribute__((format(printf, 2, 0))) static void set_message(rs_error *err, const char *fmt, va_list ap)
{
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
}

__attribute__((format(printf, 3, 0))) static void fail_v(rs_error *err, int transient, const char *fmt, va_list ap)
{
    if (!err)
        return;
    set_message(err, fmt, ap);
    err->transient = transient;
}

int rs_fail(rs_error *err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fail_v(err, 0, fmt, ap);
    va_end(ap);
    return -1;
}

int rs_fail_transient(rs_error *err, int why, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fail_v(err, why, fmt, ap);
    va_end(ap);
    return -1;
}

int rs_fail_sys(rs_error *err, int errnum, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fail_v(err, errnum == ENOSPC || errnum == EDQUOT ? RS_TRANSIENT_IO : 0, fmt, ap);
    va_end(ap);
    return -1;
}

int rs_fail_ssl(rs_error *err, const char *fmt, ...)
{
    va_list ap;
    unsigned long code = ERR_peek_last_error();

    if (!err) {
        ERR_clear_error();
        return -1;
    }
    va_start(ap, fmt);
    set_message(err, fmt, ap);
    va_end(ap);
    err->transient = 0;
    if (code) {
        size_t used = strlen(err->msg);
        const char *reason = ERR_reason_error_string(code);

        snprintf(err->msg + used, sizeof(err->msg) - used, " (%s)", reason ? reason : "OpenSSL error");
    }
    ERR_clear_error();
    return -1;
}

int rs_error_prefix(rs_error *err, const char *fmt, ...)
{
    char old[RS_ERROR_MAX];
    size_t used;
    va_list ap;

    if (!err)
        return -1;
    memcpy(old, err->msg, sizeof(old));
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    used = strlen(err->msg);
    if (used + 2 < sizeof(err->msg)) {
        memcpy(err->msg + used, ": ", 3);
        used += 2;
        strncat(err->msg + used, old, sizeof(err->msg) - used - 1);
    }
    return -1;
}

/* SQLite, loaded on first use (see base/dlib.h): only the service keeps
 * state, and linking it cost every other command ~0.5 ms of start-up. */
#ifndef RS_SQLITE_LIB_H
#define RS_SQLITE_LIB_H

#include <sqlite3.h>

#include "base/dlib.h"
#include "base/error.h"

#define RS_SQLITE_SYMBOLS(X)                                                                                    \
    X(sqlite3_bind_int) X(sqlite3_bind_int64) X(sqlite3_bind_text) X(sqlite3_busy_timeout) X(sqlite3_changes)   \
    X(sqlite3_close) X(sqlite3_column_int) X(sqlite3_column_int64) X(sqlite3_column_text) X(sqlite3_errmsg)     \
    X(sqlite3_exec) X(sqlite3_finalize) X(sqlite3_open_v2) X(sqlite3_prepare_v2) X(sqlite3_reset) X(sqlite3_step) \
    X(sqlite3_system_errno)

RS_SQLITE_SYMBOLS(RS_DLIB_DECLARE)

int rs_sqlite_load(rs_error *err);

#endif

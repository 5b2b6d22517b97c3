#include "service/sqlite_lib.h"

RS_DLIB_LIBRARY(rs_sqlite_load, "libsqlite3.so.0", "libsqlite3-0", RS_SQLITE_SYMBOLS)

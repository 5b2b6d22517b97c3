#include "service/sqlite_lib.h"

RS_SQLITE_SYMBOLS(RS_DLIB_DEFINE)

static const char *const names[] = { RS_SQLITE_SYMBOLS(RS_DLIB_NAME) };
static void **const slots[] = { RS_SQLITE_SYMBOLS(RS_DLIB_SLOT) };

static rs_dlib libsqlite = {
    .soname = "libsqlite3.so.0",
    .package = "libsqlite3-0",
    .names = names,
    .slots = slots,
    .count = sizeof(names) / sizeof(names[0]),
    .once = PTHREAD_ONCE_INIT,
};

int rs_sqlite_load(rs_error *err)
{
    return rs_dlib_load(&libsqlite, err);
}

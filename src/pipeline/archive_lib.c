#include "pipeline/archive_lib.h"

#include "base/dlib.h"

RS_ARCHIVE_SYMBOLS(RS_DLIB_DEFINE)

static const char *const names[] = { RS_ARCHIVE_SYMBOLS(RS_DLIB_NAME) };
static void **const slots[] = { RS_ARCHIVE_SYMBOLS(RS_DLIB_SLOT) };

static rs_dlib libarchive = {
    .soname = "libarchive.so.13",
    .package = "libarchive13",
    .names = names,
    .slots = slots,
    .count = sizeof(names) / sizeof(names[0]),
    .once = PTHREAD_ONCE_INIT,
};

int rs_archive_load(rs_error *err)
{
    return rs_dlib_load(&libarchive, err);
}

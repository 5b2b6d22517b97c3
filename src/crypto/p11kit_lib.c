#include "crypto/p11kit_lib.h"

RS_P11KIT_SYMBOLS(RS_DLIB_DEFINE)

static const char *const names[] = { RS_P11KIT_SYMBOLS(RS_DLIB_NAME) };
static void **const slots[] = { RS_P11KIT_SYMBOLS(RS_DLIB_SLOT) };

static rs_dlib libp11kit = {
    .soname = "libp11-kit.so.0",
    .package = "libp11-kit0",
    .names = names,
    .slots = slots,
    .count = sizeof(names) / sizeof(names[0]),
    .once = PTHREAD_ONCE_INIT,
};

int rs_p11kit_load(rs_error *err)
{
    return rs_dlib_load(&libp11kit, err);
}

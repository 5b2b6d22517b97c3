#include "crypto/p11kit_lib.h"

RS_DLIB_LIBRARY(rs_p11kit_load, "libp11-kit.so.0", "libp11-kit0", RS_P11KIT_SYMBOLS)

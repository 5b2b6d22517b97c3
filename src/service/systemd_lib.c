#include "service/systemd_lib.h"

RS_DLIB_LIBRARY(rs_systemd_load, "libsystemd.so.0", "libsystemd0", RS_SYSTEMD_SYMBOLS)

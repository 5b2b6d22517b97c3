#include "archive/archive_lib.h"

#include "base/dlib.h"

RS_DLIB_LIBRARY(rs_archive_load, "libarchive.so.13", "libarchive13", RS_ARCHIVE_SYMBOLS)

/* libarchive, loaded on first use. Linking it would load libxml2, ICU and
 * libstdc++ into every reprosign process, which costs a per-file sign a
 * few milliseconds; only the pipeline reads .debs and writes tarballs.
 * Each function is called through sym_<name>, typed from libarchive's own
 * prototype, after rs_archive_load() has succeeded (as systemd does for
 * its optional libraries). */
#ifndef RS_ARCHIVE_LIB_H
#define RS_ARCHIVE_LIB_H

#include <archive.h>
#include <archive_entry.h>

#include "base/dlib.h"
#include "base/error.h"

#define RS_ARCHIVE_SYMBOLS(X)                                                                          \
    X(archive_entry_filetype) X(archive_entry_free) X(archive_entry_hardlink) X(archive_entry_new)      \
    X(archive_entry_pathname) X(archive_entry_perm) X(archive_entry_set_filetype)                      \
    X(archive_entry_set_gid) X(archive_entry_set_gname) X(archive_entry_set_mtime)                     \
    X(archive_entry_set_pathname) X(archive_entry_set_perm) X(archive_entry_set_size)                  \
    X(archive_entry_set_uid) X(archive_entry_set_uname) X(archive_entry_size) X(archive_entry_symlink) \
    X(archive_errno) X(archive_error_string) X(archive_filter_code) X(archive_read_data) X(archive_read_data_block)            \
    X(archive_read_free)                                                                               \
    X(archive_read_new) X(archive_read_next_header) X(archive_read_open) X(archive_read_open_fd) X(archive_read_open_filename)  \
    X(archive_read_support_filter_bzip2) X(archive_read_support_filter_gzip)                           \
    X(archive_read_support_filter_lzma) X(archive_read_support_filter_xz)                              \
    X(archive_read_support_filter_zstd) X(archive_read_support_format_ar)                              \
    X(archive_read_support_format_raw) X(archive_read_support_format_tar) X(archive_write_add_filter_gzip) X(archive_write_close)            \
    X(archive_write_data) X(archive_write_free) X(archive_write_header) X(archive_write_new)            \
    X(archive_write_open_fd) X(archive_write_set_bytes_in_last_block) X(archive_write_set_filter_option)                                  \
    X(archive_write_set_format_pax_restricted)

RS_ARCHIVE_SYMBOLS(RS_DLIB_DECLARE)

/* Loads libarchive once per process; safe from several threads. */
int rs_archive_load(rs_error *err);

#endif

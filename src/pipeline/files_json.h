/* files.json: what a signing template asks to have signed. Debian uses
 * three shapes: a bare {pkg: {...}} map, {"packages": {...}}, and
 * {"version": "2", "packages": {...}}. All are read into one model, and
 * everything a hostile template could abuse is refused here. */
#ifndef RS_FILES_JSON_H
#define RS_FILES_JSON_H

#include <stddef.h>

#include "base/error.h"
#include "base/strpool.h"

/* files.json: linux-image-6.12's is 679 bytes, a module-heavy one with
 * every module of a flavour listed ~250 KB; 16 MiB is 60 times that. */
#define RS_MAX_FILES_JSON (16 * 1024 * 1024)

typedef enum { SIG_EFI, SIG_LINUX_MODULE } rs_sig_type;
#define RS_SIG_TYPES 2   /* arrays indexed by rs_sig_type */

typedef struct rs_sign_file {
    rs_sig_type type;
    char *path;               /* relative to the package root, validated */
} rs_sign_file;

typedef struct rs_sign_package {
    char *name;
    char **trusted_certs;     /* lower-case hex SHA-256 fingerprints */
    size_t n_trusted_certs;
    rs_sign_file *files;      /* NULL when the files went to a sink */
    size_t n_files;
    unsigned types;           /* 1 << each rs_sig_type its files have */
} rs_sign_package;

/* Where each file's entry goes as it is read, instead of the model: pkg
 * is its package's index. The path lasts only for the call. A job that
 * keeps its files on disk (sign-template) is then never the size of the
 * list in memory. */
typedef struct rs_files_json_sink {
    int (*add)(void *ctx, size_t pkg, const rs_sign_file *f, rs_error *err);
    void *ctx;
} rs_files_json_sink;

typedef struct rs_files_json {
    rs_sign_package *packages;
    size_t n_packages;
    rs_strpool paths;         /* holds every file's path */
    const rs_files_json_sink *sink;   /* where the files went, or NULL: kept here */
} rs_files_json;

/* Reads files.json as a stream from fd, up to its end, validating as it
 * goes, so a long list is held as its entries (or handed to sink, if not
 * NULL) and never as its text or its tree; errors name the offending
 * entry. */
int rs_files_json_read(int fd, const rs_files_json_sink *sink, rs_files_json *out, rs_error *err);
/* The same from memory, handed to the reader `chunk` bytes at a time (0:
 * all at once), so tests and fuzzing reach every place a read may end. */
int rs_files_json_parse_chunked(const char *text, size_t len, size_t chunk, rs_files_json *out, rs_error *err);
int rs_files_json_parse(const char *text, size_t len, rs_files_json *out, rs_error *err);
int rs_files_json_parse_to(const char *text, size_t len, const rs_files_json_sink *sink, rs_files_json *out,
                           rs_error *err);
void rs_files_json_free(rs_files_json *fj);

const char *rs_sig_type_name(rs_sig_type t);

/* ^[a-z0-9][a-z0-9+.-]+$ */
int rs_valid_package_name(const char *name);
/* Relative, no empty, "." or ".." components, no NUL or backslash tricks. */
int rs_valid_relative_path(const char *path);

#endif

/* `log monitor`'s tarballs: members ending in ".sig" are published
 * signature files; any other member that is itself a tarball (by its
 * bytes, whatever its name) is read in turn, streamed from its parent,
 * up to MONITOR_MAX_NESTING deep. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/archive_read.h"
#include "base/cleanup.h"
#include "base/file.h"
#include "translog/monitor_internal.h"

/* A signature file's bytes, refusing one over MONITOR_MAX_SIG. */
static int read_sig(struct archive *a, const char *file, const char *member, rs_bytes *out, rs_error *err)
{
    uint8_t buf[16384];
    la_ssize_t got;

    while ((got = sym_archive_read_data(a, buf, sizeof(buf))) > 0) {
        if (out->len + (size_t)got > MONITOR_MAX_SIG)
            return rs_fail(err, "%s: %s: a signature over the limit of %d bytes", file, member, MONITOR_MAX_SIG);
        if (rs_bytes_append(out, buf, (size_t)got, err) < 0)
            return -1;
    }
    return got < 0 ? rs_fail(err, "%s: %s: %s", file, member, sym_archive_error_string(a)) : 0;
}

/* The walk of one tarball: `file` is the top one's path, `outer` the
 * members leading to this one ("" at the top, else "a.tar.gz", or
 * "a.tar.gz: b.tar.xz" a level deeper). */
typedef struct tar_walk {
    const monitor_walk *w;
    const char *file;
    const char *outer;
    unsigned depth;
} tar_walk;

static int scan(const tar_walk *t, struct archive *a, rs_error *err);

/* A member that is a tarball is read as one; any other is left. */
static int scan_nested(const tar_walk *t, struct archive *a, const char *member, rs_error *err)
{
    _cleanup_(rs_archive_freep) struct archive *inner = NULL;
    rs_error not_tar;

    if (!(inner = rs_archive_open_entry_tar(a, member, &not_tar)))
        return 0;
    if (t->depth == MONITOR_MAX_NESTING) {
        char why[96];

        snprintf(why, sizeof(why), "a tarball nested more than %d deep", MONITOR_MAX_NESTING);
        monitor_unchecked(t->w, t->file, member, why);
        return 0;
    }
    return scan(&(tar_walk){ t->w, t->file, member, t->depth + 1 }, inner, err);
}

static int scan(const tar_walk *t, struct archive *a, rs_error *err)
{
    struct archive_entry *e;
    int rc;

    while ((rc = sym_archive_read_next_header(a, &e)) == ARCHIVE_OK) {
        const char *name = sym_archive_entry_pathname(e) ? sym_archive_entry_pathname(e) : "";
        _cleanup_free_ char *member = NULL;
        _cleanup_bytes_ rs_bytes sig = { 0 };

        if (sym_archive_entry_filetype(e) != AE_IFREG)
            continue;
        if (asprintf(&member, "%s%s%s", t->outer, t->depth ? ": " : "", name) < 0)
            return rs_fail(err, "out of memory");
        if (!rs_name_has_suffix(name, ".sig")) {
            if (scan_nested(t, a, member, err) < 0)
                return -1;
            continue;
        }
        if (read_sig(a, t->file, member, &sig, err) < 0 ||
            monitor_published_sig(t->w, t->file, member, sig.data, sig.len, err) < 0)
            return -1;
    }
    if (rc != ARCHIVE_EOF) {
        rs_archive_fail(err, a, t->depth ? "corrupt nested tarball" : "corrupt tarball");
        return rs_error_prefix(err, "%s%s%s", t->file, t->depth ? ": " : "", t->depth ? t->outer : "");
    }
    return 0;
}

int monitor_scan_tarball(const monitor_walk *w, const char *path, rs_error *err)
{
    _cleanup_(rs_archive_freep) struct archive *a = sym_archive_read_new();

    if (!a)
        return rs_fail(err, "out of memory");
    sym_archive_read_support_filter_xz(a);
    sym_archive_read_support_filter_gzip(a);
    sym_archive_read_support_filter_bzip2(a);
    sym_archive_read_support_filter_zstd(a);
    sym_archive_read_support_format_tar(a);
    if (sym_archive_read_open_filename(a, path, 65536) != ARCHIVE_OK)
        return rs_fail(err, "%s: %s", path, sym_archive_error_string(a));
    return scan(&(tar_walk){ w, path, "", 0 }, a, err);
}

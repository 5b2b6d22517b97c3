#include "pipeline/deb_archive.h"

#include <string.h>

#include "base/cleanup.h"

#define BLOCK (64 * 1024)

void rs_deb_normalise(char *name)
{
    size_t n;

    while (name[0] == '.' && name[1] == '/')
        memmove(name, name + 2, strlen(name + 2) + 1);
    while (name[0] == '/')
        memmove(name, name + 1, strlen(name + 1) + 1);
    n = strlen(name);
    while (n && name[n - 1] == '/')
        name[--n] = '\0';
}

struct archive *rs_deb_open_ar(const char *path, rs_error *err)
{
    struct archive *a;

    if (rs_archive_load(err) < 0)
        return NULL;
    a = sym_archive_read_new();
    if (!a)
        return rs_fail(err, "out of memory"), NULL;
    sym_archive_read_support_format_ar(a);
    if (sym_archive_read_open_filename(a, path, BLOCK) != ARCHIVE_OK) {
        rs_archive_fail(err, a, "not a Debian package");
        sym_archive_read_free(a);
        return NULL;
    }
    return a;
}

struct archive *rs_deb_open_member_tar(struct archive *outer, const char *prefix, rs_error *err)
{
    struct archive_entry *e;
    int rc;

    while ((rc = sym_archive_read_next_header(outer, &e)) == ARCHIVE_OK) {
        const char *name = sym_archive_entry_pathname(e);

        if (name && !strncmp(name, prefix, strlen(prefix)))
            break;
    }
    if (rc != ARCHIVE_OK)
        return rc == ARCHIVE_EOF ? (rs_fail(err, "no %s member: not a Debian package", prefix), NULL)
                                 : (rs_archive_fail(err, outer, "not a Debian package"), NULL);
    return rs_archive_open_entry_tar(outer, prefix, err);
}

int rs_deb_walk_data(const char *path, rs_deb_entry_fn fn, void *ctx, rs_error *err)
{
    _cleanup_archive_ struct archive *ar = rs_deb_open_ar(path, err);
    _cleanup_archive_ struct archive *data = NULL;
    struct archive_entry *e;
    int rc;

    if (!ar || !(data = rs_deb_open_member_tar(ar, "data.tar", err)))
        return -1;
    while ((rc = sym_archive_read_next_header(data, &e)) == ARCHIVE_OK) {
        _cleanup_free_ char *name = strdup(sym_archive_entry_pathname(e) ? sym_archive_entry_pathname(e) : "");

        if (!name)
            return rs_fail(err, "out of memory");
        rs_deb_normalise(name);
        if ((rc = fn(ctx, data, e, name, err)) != 0)
            return rc < 0 ? -1 : RS_DEB_STOP;
    }
    if (rc != ARCHIVE_EOF)
        return rs_archive_fail(err, data, "corrupt data.tar");
    return 0;
}

rs_node_type rs_deb_entry_type(struct archive_entry *e)
{
    if (sym_archive_entry_hardlink(e))
        return RS_NODE_HARDLINK;
    switch (sym_archive_entry_filetype(e)) {
    case AE_IFREG:
        return RS_NODE_FILE;
    case AE_IFDIR:
        return RS_NODE_DIR;
    case AE_IFLNK:
        return RS_NODE_SYMLINK;
    default:
        return RS_NODE_OTHER;
    }
}

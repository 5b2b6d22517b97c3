#include "pipeline/decompress.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "pipeline/archive_lib.h"
#include "pipeline/deb_archive.h"

#define BLOCK (64 * 1024)

bool rs_is_compressed_module_name(const char *name)
{
    return rs_name_has_suffix(name, ".ko.xz") || rs_name_has_suffix(name, ".ko.zst") ||
           rs_name_has_suffix(name, ".ko.gz");
}

int rs_decompress_to_memfd(const char *path, uint64_t limit, int *out, uint64_t *size, rs_error *err)
{
    _cleanup_close_ int in = -1, fd = -1;   /* closed after the archive is freed */
    _cleanup_(rs_deb_archive_freep) struct archive *a = NULL;
    struct archive_entry *e;

    if (rs_archive_load(err) < 0)
        return rs_error_prefix(err, "%s", path);
    a = sym_archive_read_new();
    if (!a)
        return rs_fail(err, "%s: out of memory", path);
    sym_archive_read_support_filter_xz(a);
    sym_archive_read_support_filter_zstd(a);
    sym_archive_read_support_filter_gzip(a);
    sym_archive_read_support_format_raw(a);
    in = open(path, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return rs_fail_sys(err, errno, "%s: cannot open: %s", path, strerror(errno));
    /* From here on, what fails is the data. The one "entry" of libarchive's
     * raw format is the decompressed stream. */
    if (sym_archive_read_open_fd(a, in, BLOCK) != ARCHIVE_OK || sym_archive_read_next_header(a, &e) != ARCHIVE_OK) {
        rs_deb_archive_fail(err, a, "corrupt stream");
        return rs_error_prefix(err, "%s: decompressed", path);
    }
    /* Filter 0 is the last one applied; "none" means the bytes are as stored. */
    if (sym_archive_filter_code(a, 0) == ARCHIVE_FILTER_NONE)
        return rs_fail(err, "%s: not compressed with xz, zstd or gzip, as its name says", path);
    fd = memfd_create("reprosign-decompressed", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return rs_fail(err, "%s: memfd_create: %s", path, strerror(errno));
    if (rs_archive_copy_data(a, fd, NULL, limit, "stream", size, err) < 0)
        return rs_error_prefix(err, "%s: decompressed", path);
    /* What was checked is what was decompressed: nobody can change it now. */
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
        return rs_fail(err, "%s: cannot seal the decompressed file: %s", path, strerror(errno));
    *out = TAKE_FD(fd);
    return 0;
}

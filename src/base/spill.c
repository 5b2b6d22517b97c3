#include "base/spill.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"

static const char *spill_dir(void)
{
    const char *dir = getenv("TMPDIR");

    return dir && *dir ? dir : "/tmp";
}

int rs_spill_open(rs_spill *s, rs_error *err)
{
    const char *dir = spill_dir();

    _cleanup_free_ char *name = NULL;

    s->size = 0;
    s->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (s->fd >= 0)
        return 0;
    /* A file system without O_TMPFILE: a named file, unlinked at once. */
    if (errno != EOPNOTSUPP && errno != EISDIR)
        return rs_fail_sys(err, errno, "%s: cannot create a temporary file: %s", dir, strerror(errno));
    if (asprintf(&name, "%s/reprosign-spill-XXXXXX", dir) < 0)
        return rs_fail(err, "out of memory");
    if ((s->fd = mkostemp(name, O_CLOEXEC)) < 0)
        return rs_fail_sys(err, errno, "%s: cannot create a temporary file: %s", dir, strerror(errno));
    unlink(name);
    return 0;
}

static int in_spill(const rs_spill *s, uint64_t at, size_t n, rs_error *err)
{
    if (at > s->size || n > s->size - at)
        return rs_fail(err, "temporary file: %zu bytes at %ju are past its end", n, (uintmax_t)at);
    return 0;
}

int rs_spill_append(rs_spill *s, const void *data, size_t n, uint64_t *at, rs_error *err)
{
    if (s->size > (uint64_t)INT64_MAX - n)
        return rs_fail(err, "temporary file: too large");
    if (rs_pwrite_all(s->fd, data, n, (off_t)s->size) < 0)
        return rs_fail_sys(err, errno, "%s: cannot write a temporary file: %s", spill_dir(), strerror(errno));
    if (at)
        *at = s->size;
    s->size += n;
    return 0;
}

int rs_spill_read(const rs_spill *s, uint64_t at, void *data, size_t n, rs_error *err)
{
    ssize_t r;

    if (in_spill(s, at, n, err) < 0)
        return -1;
    if ((r = rs_pread_all(s->fd, data, n, (off_t)at)) < 0 || (size_t)r < n)
        return rs_fail(err, "%s: cannot read a temporary file: %s", spill_dir(),
                       r < 0 ? strerror(errno) : "it is shorter than written");
    return 0;
}

int rs_spill_write(rs_spill *s, uint64_t at, const void *data, size_t n, rs_error *err)
{
    if (in_spill(s, at, n, err) < 0)
        return -1;
    if (rs_pwrite_all(s->fd, data, n, (off_t)at) < 0)
        return rs_fail_sys(err, errno, "%s: cannot write a temporary file: %s", spill_dir(), strerror(errno));
    return 0;
}

void rs_spill_close(rs_spill *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    s->size = 0;
}

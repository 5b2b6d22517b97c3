/* Locks (file.h). */
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* A POSIX record lock, not flock(): a child that posix_spawn() starts has a
 * copy of every descriptor until it execs, and a flock() would stay held
 * through that copy if this process were killed meanwhile. A record lock
 * belongs to the process and is gone the moment it dies. */
int rs_lock_file(const char *path, int *fd, bool *busy, rs_error *err)
{
    struct flock whole = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
    int e;

    *busy = false;
    *fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (*fd < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    if (fcntl(*fd, F_SETLK, &whole) == 0)
        return 0;
    e = errno;
    close(*fd);
    *fd = -1;
    *busy = e == EACCES || e == EAGAIN;
    return rs_fail(err, "%s: %s", path, *busy ? "locked by another process" : strerror(e));
}

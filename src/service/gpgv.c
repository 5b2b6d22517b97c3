#include "service/gpgv.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/child_env.h"
#include "base/cleanup.h"

static int memfd_with(const char *name, const rs_bytes *b, int flags, rs_error *err)
{
    int fd = memfd_create(name, flags);
    size_t off = 0;

    if (fd < 0)
        return rs_fail(err, "memfd_create: %s", strerror(errno));
    while (off < b->len) {
        ssize_t n = write(fd, b->data + off, b->len - off);

        if (n <= 0 && errno != EINTR) {
            close(fd);
            return rs_fail(err, "memfd: %s", strerror(errno));
        }
        off += n > 0 ? (size_t)n : 0;
    }
    return fd;
}

/* The last line gpgv printed: the reason it refused. */
static void last_line(int fd, char *out, size_t size)
{
    off_t end = lseek(fd, 0, SEEK_END);
    off_t from = end > (off_t)size - 1 ? end - (off_t)size + 1 : 0;
    ssize_t got = pread(fd, out, size - 1, from);
    char *nl;

    out[got > 0 ? got : 0] = '\0';
    while ((nl = strrchr(out, '\n')) && nl[1] == '\0')
        *nl = '\0';
    if ((nl = strrchr(out, '\n')))
        memmove(out, nl + 1, strlen(nl + 1) + 1);
}

int rs_gpgv_verify(const char *keyring, const rs_bytes *data, const rs_bytes *sig, rs_error *err)
{
    _cleanup_close_ int log = memfd_create("gpgv-log", MFD_CLOEXEC), dfd = -1, sfd = -1;
    char dpath[64], spath[64], reason[512];
    posix_spawn_file_actions_t fa;
    int status, rc;
    pid_t pid;

    if (log < 0)
        return rs_fail(err, "memfd_create: %s", strerror(errno));
    /* Not close-on-exec: gpgv opens them as /dev/fd/N. */
    if ((dfd = memfd_with("signed-data", data, 0, err)) < 0 || (sfd = memfd_with("signature", sig, 0, err)) < 0)
        return -1;
    snprintf(dpath, sizeof(dpath), "/dev/fd/%d", dfd);
    snprintf(spath, sizeof(spath), "/dev/fd/%d", sfd);
    char *argv[] = { "gpgv", "--keyring", (char *)keyring, spath, dpath, NULL };
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, log, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, log, STDERR_FILENO);
    rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, rs_child_environ());
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return rs_fail(err, "cannot run gpgv: %s", strerror(rc));
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return rs_fail(err, "waitpid: %s", strerror(errno));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    last_line(log, reason, sizeof(reason));
    return rs_fail(err, "the OpenPGP signature does not verify with %s (gpgv: %s)", keyring, reason);
}

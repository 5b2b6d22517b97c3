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
#include "base/file.h"

/* gpgv prints a few lines for one signature; a keyring of many keys, a
 * few per key. */
#define MAX_STATUS (1024 * 1024)

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

/* Status keywords that refuse, whatever else was said, and why. */
static const struct {
    const char *keyword, *why;
} refusals[] = {
    { "BADSIG", "a bad signature" },
    { "ERRSIG", "a signature that could not be checked" },
    { "EXPSIG", "an expired signature" },
    { "EXPKEYSIG", "a signature by an expired key" },
    { "REVKEYSIG", "a signature by a revoked key" },
    { "NO_PUBKEY", "a signature by a key not in the keyring" },
    { "NODATA", "no signature" },
};

static bool keyword_is(const char *line, size_t len, const char *keyword)
{
    size_t k = strlen(keyword);

    return len >= k && !strncmp(line, keyword, k) && (len == k || line[k] == ' ');
}

int rs_gpgv_judge(const char *status, size_t len, time_t *signed_at, rs_error *err)
{
    static const char prefix[] = "[GNUPG:] ";
    bool good = false, valid = false;
    long long when = 0;

    for (const char *p = status, *end = status + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *line = p;
        size_t n = (size_t)((nl ? nl : end) - p);

        p = nl ? nl + 1 : end;
        if (n < sizeof(prefix) - 1 || strncmp(line, prefix, sizeof(prefix) - 1))
            continue;
        line += sizeof(prefix) - 1;
        n -= sizeof(prefix) - 1;
        for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++)
            if (keyword_is(line, n, refusals[i].keyword))
                return rs_fail(err, "gpgv reports %s (%s)", refusals[i].why, refusals[i].keyword);
        good |= keyword_is(line, n, "GOODSIG");
        /* VALIDSIG <fingerprint> <date> <timestamp> ... */
        if (keyword_is(line, n, "VALIDSIG")) {
            char buf[256];

            snprintf(buf, sizeof(buf), "%.*s", (int)n, line);
            valid = sscanf(buf, "VALIDSIG %*s %*s %lld", &when) == 1 && when > 0;
        }
    }
    if (!good || !valid)
        return rs_fail(err, "gpgv reports no good, valid signature");
    if (signed_at)
        *signed_at = (time_t)when;
    return 0;
}

int rs_gpgv_verify(const char *keyring, const rs_bytes *data, const rs_bytes *sig, time_t *signed_at,
                   rs_error *err)
{
    _cleanup_close_ int log = memfd_create("gpgv-log", MFD_CLOEXEC), status_fd = memfd_create("gpgv-status", MFD_CLOEXEC);
    _cleanup_close_ int dfd = -1, sfd = -1;
    _cleanup_bytes_ rs_bytes status = { 0 };
    char dpath[64], spath[64], reason[512];
    posix_spawn_file_actions_t fa;
    int wstatus, rc;
    pid_t pid;

    if (log < 0 || status_fd < 0)
        return rs_fail(err, "memfd_create: %s", strerror(errno));
    /* Not close-on-exec: gpgv opens them as /dev/fd/N. */
    if ((dfd = memfd_with("signed-data", data, 0, err)) < 0 || (sfd = memfd_with("signature", sig, 0, err)) < 0)
        return -1;
    snprintf(dpath, sizeof(dpath), "/dev/fd/%d", dfd);
    snprintf(spath, sizeof(spath), "/dev/fd/%d", sfd);
    char *argv[] = { "gpgv", "--status-fd", "1", "--keyring", (char *)keyring, spath, dpath, NULL };
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, status_fd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, log, STDERR_FILENO);
    rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, rs_child_environ());
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return rs_fail(err, "cannot run gpgv: %s", strerror(rc));
    while (waitpid(pid, &wstatus, 0) < 0)
        if (errno != EINTR)
            return rs_fail(err, "waitpid: %s", strerror(errno));
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
        last_line(log, reason, sizeof(reason));
        return rs_fail(err, "the OpenPGP signature does not verify with %s (gpgv: %s)", keyring, reason);
    }
    if (lseek(status_fd, 0, SEEK_SET) < 0 || rs_read_fd(TAKE_FD(status_fd), "gpgv's status", MAX_STATUS, &status, err) < 0)
        return -1;
    if (rs_gpgv_judge((const char *)status.data, status.len, signed_at, err) < 0)
        return rs_error_prefix(err, "the OpenPGP signature does not verify with %s", keyring);
    return 0;
}

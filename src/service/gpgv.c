#include "service/gpgv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "base/spawn.h"

/* gpgv prints a few lines for one signature; a keyring of many keys, a
 * few per key. */
#define MAX_STATUS (1024 * 1024)

/* A close-on-exec memfd holding b: rs_run_tool_with passes it on to gpgv
 * alone. */
static int memfd_with(const char *name, const rs_bytes *b, rs_error *err)
{
    int fd = memfd_create(name, MFD_CLOEXEC);

    if (fd < 0)
        return rs_fail(err, "memfd_create: %s", strerror(errno));
    if (rs_write_all(fd, b->data, b->len) < 0) {
        rs_fail(err, "memfd: %s", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
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
    _cleanup_close_ int status_fd = memfd_create("gpgv-status", MFD_CLOEXEC), dfd = -1, sfd = -1;
    _cleanup_bytes_ rs_bytes status = { 0 };
    char dpath[64], spath[64];

    if (status_fd < 0)
        return rs_fail(err, "memfd_create: %s", strerror(errno));
    if ((dfd = memfd_with("signed-data", data, err)) < 0 || (sfd = memfd_with("signature", sig, err)) < 0)
        return -1;
    snprintf(dpath, sizeof(dpath), "/dev/fd/%d", dfd);
    snprintf(spath, sizeof(spath), "/dev/fd/%d", sfd);
    char *argv[] = { "gpgv", "--status-fd", "1", "--keyring", (char *)keyring, spath, dpath, NULL };
    const int pass[] = { dfd, sfd };
    rs_tool_opts opts = { .stdout_fd = status_fd, .pass_fds = pass, .n_pass_fds = 2 };

    if (rs_run_tool_with(argv, &opts, err) < 0)
        return rs_error_prefix(err, "the OpenPGP signature does not verify with %s", keyring);
    if (lseek(status_fd, 0, SEEK_SET) < 0 || rs_read_fd(TAKE_FD(status_fd), "gpgv's status", MAX_STATUS, &status, err) < 0)
        return -1;
    if (rs_gpgv_judge((const char *)status.data, status.len, signed_at, err) < 0)
        return rs_error_prefix(err, "the OpenPGP signature does not verify with %s", keyring);
    return 0;
}

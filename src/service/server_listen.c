/* The socket the service accepts on: systemd's when it passed one,
 * otherwise a new one, made with the mode the allowlist expects. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "service/daemon.h"
#include "service/server_internal.h"

/* A socket file left by a killed service is replaced; a live one is not. */
static int clear_stale(const char *path, const struct sockaddr_un *addr, rs_error *err)
{
    struct stat st;
    _cleanup_close_ int probe = -1;

    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : rs_fail(err, "%s: %s", path, strerror(errno));
    if (!S_ISSOCK(st.st_mode))
        return rs_fail(err, "%s: exists and is not a socket", path);
    probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (probe >= 0 && connect(probe, (const struct sockaddr *)addr, sizeof(*addr)) == 0)
        return rs_fail(err, "%s: another service is listening on it", path);
    return unlink(path) == 0 ? 0 : rs_fail(err, "%s: %s", path, strerror(errno));
}

int server_listen(const rs_service_config *c, int *out, bool *passed, rs_error *err)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    _cleanup_close_ int fd = -1;
    const char *path = c->socket;
    mode_t old_mask;
    int rc;

    /* Under reprosign.socket, systemd made it (SocketMode=, SocketGroup=). */
    if ((rc = rs_daemon_listen_fd(path, out, err)) != 0)
        return *passed = rc > 0, rc > 0 ? 0 : -1;
    if (strlen(path) >= sizeof(addr.sun_path))
        return rs_fail(err, "%s: the socket path is too long", path);
    strcpy(addr.sun_path, path);
    if (clear_stale(path, &addr, err) < 0)
        return -1;
    if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return rs_fail(err, "socket: %s", strerror(errno));
    /* 0660: the service's group, or socket.group's, may connect; the
     * allowlist (SO_PEERCRED) then decides who may sign, and a refused
     * member gets the reason. The mode comes from the umask at bind(), so
     * no chmod goes through a path a symlink could have replaced. */
    old_mask = umask(0117);
    rc = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
    umask(old_mask);
    if (rc < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    if ((c->socket_group_set && fchownat(AT_FDCWD, path, (uid_t)-1, c->socket_group, AT_SYMLINK_NOFOLLOW) < 0) ||
        listen(fd, 256) < 0) {
        unlink(path);
        return rs_fail(err, "%s: %s", path, strerror(errno));
    }
    *out = TAKE_FD(fd);
    return 0;
}

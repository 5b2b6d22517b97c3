#include "service/daemon.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "base/iso_time.h"
#include "service/systemd_lib.h"

/* libsystemd only when systemd is the one asking. */
static bool loaded(const char *variable)
{
    rs_error ignored;

    return getenv(variable) && rs_systemd_load(&ignored) == 0;
}

void rs_daemon_notify(const char *state)
{
    if (loaded("NOTIFY_SOCKET"))
        sym_sd_notify(0, state);
}

unsigned long long rs_daemon_watchdog_usec(void)
{
    const char *usec = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");

    if (!usec || (pid && strtol(pid, NULL, 10) != getpid()))
        return 0;
    return strtoull(usec, NULL, 10);
}

int rs_daemon_listen_fd(const char *path, int *fd, rs_error *err)
{
    int n;

    if (!loaded("LISTEN_FDS") || (n = sym_sd_listen_fds(1)) <= 0)
        return 0;
    if (n != 1 || sym_sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_STREAM, 1, path, 0) <= 0)
        return rs_fail(err, "%s: systemd passed %d descriptors, not this listening socket (check reprosign.socket's "
                            "ListenStream=)", path, n);
    *fd = SD_LISTEN_FDS_START;
    return 1;
}

/* JOURNAL_STREAM is "DEV:INODE" of the stream systemd connected stderr to. */
static bool stderr_is_journal(void)
{
    const char *js = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;

    return js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
           st.st_dev == (dev_t)dev && st.st_ino == (ino_t)ino;
}

/* FIELD=value for the journal; NULL and empty values are left out. */
static void add_field(struct iovec *iov, char **owned, int *n, const char *name, const char *value)
{
    if (value && *value && asprintf(&owned[*n], "%s=%s", name, value) >= 0) {
        iov[*n] = (struct iovec){ owned[*n], strlen(owned[*n]) };
        (*n)++;
    }
}

static void to_journal(const rs_log_fields *f, const char *message)
{
    struct iovec iov[8];
    char *owned[8] = { 0 }, priority[4];
    int n = 0;

    snprintf(priority, sizeof(priority), "%d", f->priority ? f->priority : LOG_INFO);
    add_field(iov, owned, &n, "MESSAGE", message);
    add_field(iov, owned, &n, "PRIORITY", priority);
    add_field(iov, owned, &n, "SYSLOG_IDENTIFIER", "reprosign");
    add_field(iov, owned, &n, "REPROSIGN_REQUEST", f->request);
    add_field(iov, owned, &n, "REPROSIGN_PACKAGE", f->package);
    add_field(iov, owned, &n, "REPROSIGN_DIGEST", f->digest);
    add_field(iov, owned, &n, "REPROSIGN_PEER_UID", f->peer_uid);
    sym_sd_journal_sendv(iov, n);
    for (int i = 0; i < n; i++)
        free(owned[i]);
}

void rs_daemon_log(const rs_log_fields *f, const char *message)
{
    static const rs_log_fields none = { 0 };
    char stamp[RS_ISO_TIME_MAX];

    f = f ? f : &none;
    if (stderr_is_journal() && loaded("JOURNAL_STREAM")) {
        to_journal(f, message);
        return;
    }
    rs_iso_time(time(NULL), stamp);
    fprintf(stderr, "%s reprosign: %s\n", stamp, message);
}

void rs_notef(rs_note_fn fn, void *ctx, const rs_log_fields *fields, const char *fmt, ...)
{
    char line[RS_ERROR_MAX + 256];
    va_list ap;

    if (!fn)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fn(ctx, fields, line);
}

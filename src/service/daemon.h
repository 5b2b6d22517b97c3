/* The service as systemd runs it (debian/reprosign.service): readiness
 * and status through sd_notify, the signing socket passed in by
 * reprosign.socket, and log lines to the journal with structured fields.
 * Run by hand, each falls back to what a plain process does. */
#ifndef RS_DAEMON_H
#define RS_DAEMON_H

#include <stdbool.h>
#include <sys/types.h>

#include "base/error.h"

/* Sends a notification ("READY=1", "STATUS=...", "WATCHDOG=1") when
 * systemd asked for them (NOTIFY_SOCKET); a no-op otherwise. */
void rs_daemon_notify(const char *state);
/* How often to send WATCHDOG=1, in microseconds; 0 when no watchdog. */
unsigned long long rs_daemon_watchdog_usec(void);

/* The unix socket at path that systemd passed (LISTEN_FDS): *fd, and 1;
 * 0 when systemd passed none; -1 when it passed something else. */
int rs_daemon_listen_fd(const char *path, int *fd, rs_error *err);

/* Structured fields of a log line: syslog's priority (0: LOG_INFO), and
 * strings that may be NULL. */
typedef struct rs_log_fields {
    int priority;
    const char *request, *package, *digest, *peer_uid;
} rs_log_fields;

/* One log line: to the journal, with its fields, when stderr is the
 * journal (JOURNAL_STREAM); otherwise to stderr with a UTC timestamp.
 * fields may be NULL. */
void rs_daemon_log(const rs_log_fields *fields, const char *message);

/* The service's operational messages go to a note function (the CLI's
 * prints them with rs_daemon_log); fields may be NULL. */
typedef void (*rs_note_fn)(void *ctx, const rs_log_fields *fields, const char *line);
/* Formats a message for fn, when there is one. */
void rs_notef(rs_note_fn fn, void *ctx, const rs_log_fields *fields, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif

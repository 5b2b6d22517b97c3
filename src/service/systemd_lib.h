/* libsystemd, loaded on first use (see base/dlib.h), and only when systemd
 * runs the service (NOTIFY_SOCKET, LISTEN_FDS, JOURNAL_STREAM): every
 * other command, and a service run by hand, never maps it. */
#ifndef RS_SYSTEMD_LIB_H
#define RS_SYSTEMD_LIB_H

#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

#include "base/dlib.h"
#include "base/error.h"

#define RS_SYSTEMD_SYMBOLS(X) X(sd_notify) X(sd_listen_fds) X(sd_is_socket_unix) X(sd_journal_sendv)

RS_SYSTEMD_SYMBOLS(RS_DLIB_DECLARE)

int rs_systemd_load(rs_error *err);

#endif

/* The build-time socket: build systems send offline-signing requests and
 * get back signature values, made with the service's keys, each recorded
 * in the transparency log before it leaves. Peers are identified by
 * SO_PEERCRED and checked against the configured uids and gids. */
#ifndef RS_SERVER_H
#define RS_SERVER_H

#include <stddef.h>

#include "crypto/signer.h"
#include "service/daemon.h"
#include "service/config.h"
#include "translog/log.h"

typedef struct rs_server rs_server;


typedef struct rs_server_options {
    const rs_service_config *config;
    rs_signer *const *signers;   /* by rs_sig_type; NULL where none is configured */
    size_t n_signers;
    rs_translog *log;
    struct rs_metrics *metrics;  /* may be NULL */
    rs_note_fn note;
    void *note_ctx;
} rs_server_options;

int rs_server_start(const rs_server_options *o, rs_server **out, rs_error *err);
/* Stops accepting, ends every connection, waits for their threads. */
void rs_server_stop(rs_server *s);

#endif

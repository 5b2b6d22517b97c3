/* The signing service: picks up the archive's signing requests, runs the
 * two-stage pipeline (pipeline/sign_template.h) on each, publishes the
 * -signed source packages, and serves the build-time socket. State lives
 * in STATE/state.db; work in STATE/staging/<request>/.
 *
 * A request moves pending -> signed (or held, when embargoed) ->
 * published, or to failed. Each step is one database transaction after
 * its files are in place, and each is safe to repeat: signing is
 * deterministic (the signing time is the request's recorded arrival), a
 * request's log entries are appended only when the log has none for it,
 * and its outputs appear in OUTPUT/<request>/ by one rename. So a service
 * killed at any moment and started again finishes every request exactly
 * once. */
#ifndef RS_SERVICE_H
#define RS_SERVICE_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>

#include "base/error.h"
#include "service/config.h"
#include "service/server.h"

typedef struct rs_service rs_service;

/* Creates the state directory and database and records the configuration
 * file, which is checked first. */
int rs_service_init(const char *state_dir, const char *config_path, rs_error *err);

/* Opens a state directory beside a running service (status, retry,
 * release without publishing). */
int rs_service_open(const char *state_dir, rs_note_fn note, void *note_ctx, rs_service **out, rs_error *err);
/* The same, taking its lock (one running service at a time) or failing;
 * *busy tells when another holds it. */
int rs_service_open_exclusive(const char *state_dir, rs_note_fn note, void *note_ctx, rs_service **out, bool *busy,
                              rs_error *err);
void rs_service_close(rs_service *s);

/* Opens the keys (once: a token's PIN is asked for here) and the log. */
int rs_service_load_keys(rs_service *s, rs_error *err);

/* Requests that failed in a pass: transiently (tried again by themselves,
 * with a growing delay) or refused (never tried again unless told to). */
typedef struct rs_pass_failures {
    size_t transient, refused;
} rs_pass_failures;

/* One pass: puts transient failures whose time has come back to pending,
 * reads new requests, signs every pending one, publishes every signed
 * one. A request that cannot be signed is marked failed and the pass goes
 * on; *failed counts them. */
int rs_service_pass(rs_service *s, rs_pass_failures *failed, rs_error *err);

/* Where published requests go (the configuration's "output"). */
const char *rs_service_output_dir(const rs_service *s);

/* failed -> pending: one request, or (id NULL) every failed one. */
int rs_service_retry(rs_service *s, const char *id, size_t *n, rs_error *err);

/* Serves the socket (when configured) and makes a pass every
 * poll_interval seconds until *stop is set. */
int rs_service_serve(rs_service *s, volatile sig_atomic_t *stop, rs_error *err);

/* Releases a held request: the running service publishes it. */
int rs_service_release(rs_service *s, const char *id, rs_error *err);
/* Releases a held request and publishes it now; needs the lock (an
 * exclusive open) and the keys loaded. */
int rs_service_release_and_publish(rs_service *s, const char *id, rs_error *err);

/* {"requests": [{id, package, version, suite, status, ...}], "log_size": N} */
int rs_service_status(rs_service *s, json_t **out, rs_error *err);

#endif

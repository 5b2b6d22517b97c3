/* The service's state in SQLite: one row per request with its status and
 * outputs. Every transition is one transaction, so a killed service
 * finds each request either before or after a step, never inside one. */
#ifndef RS_STATE_H
#define RS_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "service/repo.h"
#include "service/requests.h"

typedef enum { RS_REQ_PENDING, RS_REQ_SIGNED, RS_REQ_HELD, RS_REQ_PUBLISHED, RS_REQ_FAILED } rs_req_status;

const char *rs_req_status_name(rs_req_status s);

typedef struct rs_state rs_state;

/* Opens the state at path, making it if missing (service init). */
int rs_state_create(const char *path, rs_state **out, rs_error *err);
/* Opens an existing state; a missing one is an error. */
int rs_state_open(const char *path, rs_state **out, rs_error *err);
void rs_state_close(rs_state *s);
DEFINE_POINTER_CLEANUP(rs_statep, rs_state, rs_state_close)

int rs_state_meta_set(rs_state *s, const char *key, const char *value, rs_error *err);
/* *value is NULL when the key is not set. */
int rs_state_meta_get(rs_state *s, const char *key, char **value, rs_error *err);

/* Records new requests (known ids are left alone) in one transaction;
 * `now` becomes their arrival time, which is also their signing time.
 * ids[i] (ids may be NULL, an id's dir NULL) is who request i's suite was
 * when it was read for this intake. */
int rs_state_add(rs_state *s, const rs_request_list *l, const bool *embargoed, const rs_suite_identity *ids,
                 int64_t now, size_t *added, rs_error *err);

typedef struct rs_state_row {
    rs_request req;
    int64_t arrived;
    int64_t updated;
    rs_req_status status;
    char *reason;            /* why it failed */
    char *outputs;           /* JSON: [{"name", "sha256", "size"}] */
    char *entries;           /* JSON: its transparency-log entries */
    char *failure;           /* "transient" or "refused", when it failed */
    int attempts;            /* failures in a row */
    int64_t retry_at;        /* when a transient failure is tried again; 0: never */
    rs_suite_identity archive; /* its suite at intake; dir NULL when unread (or an older state) */
} rs_state_row;

void rs_state_rows_free(rs_state_row *rows, size_t n);

/* Rows in arrival order; status < 0 means all. */
int rs_state_list(rs_state *s, int status, rs_state_row **rows, size_t *n, rs_error *err);

int rs_state_set_signed(rs_state *s, const char *id, bool held, const char *outputs, const char *entries,
                        rs_error *err);
int rs_state_set_status(rs_state *s, const char *id, rs_req_status status, const char *reason, rs_error *err);
/* -> failed, with its reason and kind; retry_at (0: none) is when a
 * transient failure goes back to pending by itself. */
int rs_state_set_failed(rs_state *s, const char *id, const char *reason, bool transient, int64_t retry_at,
                        rs_error *err);
/* failed -> pending, for id or (id NULL) every failed request; *n counts them. */
int rs_state_retry(rs_state *s, const char *id, size_t *n, rs_error *err);
/* Transient failures whose retry time has come -> pending. */
int rs_state_retry_due(rs_state *s, int64_t now, size_t *n, rs_error *err);
/* held -> signed, so the next run publishes it. */
int rs_state_release(rs_state *s, const char *id, rs_error *err);

#endif

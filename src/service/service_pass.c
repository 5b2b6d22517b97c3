#include "service/service_internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "base/file.h"
#include "base/json_values.h"
#include "crypto/ossl.h"
#include "service/daemon.h"
#include "service/metrics.h"
#include "service/release_meta.h"
#include "service/repo.h"
#include "service/requests.h"
#include "service/server.h"
#include "service/service.h"
#include "service/state.h"
#include "translog/log.h"

/* ---- passes ---- */

/* A transient failure is tried again after 1, 2, 4 ... minutes, at most
 * an hour apart, ten times in a row; then it waits for `service retry`. */
#define RETRY_FIRST_S 60
#define RETRY_MAX_S 3600
#define RETRY_ATTEMPTS 10

static int64_t retry_time(const rs_state_row *row, bool transient)
{
    int64_t delay = RETRY_FIRST_S;

    if (!transient || row->attempts + 1 >= RETRY_ATTEMPTS)
        return 0;
    for (int i = 0; i < row->attempts && delay < RETRY_MAX_S; i++)
        delay *= 2;
    return (int64_t)time(NULL) + (delay < RETRY_MAX_S ? delay : RETRY_MAX_S);
}

static int fail_request(rs_service *s, const rs_state_row *row, const rs_error *why, rs_pass_failures *failed,
                        rs_error *err)
{
    _cleanup_(svc_stage_free) stage g = { 0 };
    int64_t retry_at = retry_time(row, why->transient);

    /* A failed request leaves nothing in staging. */
    if (svc_stage_paths(s, row->req.id, &g, err) == 0)
        rs_remove_tree(g.dir);
    if (why->transient == RS_TRANSIENT_TOKEN)
        rs_metrics_token_error(&s->metrics);
    if (why->transient)
        failed->transient++;
    else
        failed->refused++;
    rs_notef(s->note, s->note_ctx, &(rs_log_fields){ .priority = LOG_WARNING, .request = row->req.id }, "%s: %s: %s%s",
             row->req.id, why->transient ? "failed, for now" : "refused", why->msg,
             retry_at ? " (tried again later)" : why->transient ? " (no more retries: see 'service retry')" : "");
    return rs_state_set_failed(s->state, row->req.id, why->msg, why->transient, retry_at, err);
}

static int sign_pending(rs_service *s, rs_pass_failures *failed, rs_error *err)
{
    rs_state_row *rows = NULL;
    size_t n = 0;
    int rc = 0;

    if (rs_state_list(s->state, RS_REQ_PENDING, &rows, &n, err) < 0)
        return -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rs_error why = { 0 };

        if (svc_sign_request(s, &rows[i], &why) < 0)
            rc = fail_request(s, &rows[i], &why, failed, err);
    }
    rs_state_rows_free(rows, n);
    return rc;
}

const char *rs_service_output_dir(const rs_service *s)
{
    return s->cfg.output;
}

int rs_service_retry(rs_service *s, const char *id, size_t *n, rs_error *err)
{
    if (id && !rs_valid_request_id(id))
        return rs_fail(err, "'%s' is not a request id", id);
    return rs_state_retry(s->state, id, n, err);
}

static int publish_signed(rs_service *s, rs_pass_failures *failed, rs_error *err)
{
    rs_state_row *rows = NULL;
    size_t n = 0;
    int rc = 0;

    if (rs_state_list(s->state, RS_REQ_SIGNED, &rows, &n, err) < 0)
        return -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        bool refused;

        /* A refusal is recorded with the request; the others go on. */
        if ((rc = svc_publish(s, &rows[i], &refused, err)) < 0 && refused) {
            failed->refused++;
            rc = 0;
        }
    }
    rs_state_rows_free(rows, n);
    return rc;
}

static int pass(rs_service *s, rs_pass_failures *failed, rs_error *err)
{
    struct stat st;
    size_t due = 0;

    *failed = (rs_pass_failures){ 0 };
    if (stat(s->cfg.output, &st) < 0 || !S_ISDIR(st.st_mode))
        return rs_fail(err, "%s: the output directory does not exist", s->cfg.output);
    svc_clean_output(s);
    if (rs_state_retry_due(s->state, (int64_t)time(NULL), &due, err) < 0)
        return -1;
    if (due)
        note(s, "%zu request(s) that failed for now: trying again", due);
    /* Finish what an earlier run signed before taking on anything new. */
    if (publish_signed(s, failed, err) < 0 || svc_ingest(s, err) < 0 || sign_pending(s, failed, err) < 0 ||
        publish_signed(s, failed, err) < 0)
        return -1;
    return rs_translog_checkpoint(s->log, err);
}

/* Requests by status; false when the state cannot be read. */
static bool count_states(rs_service *s, size_t count[RS_REQ_FAILED + 1])
{
    rs_state_row *rows = NULL;
    size_t n = 0;
    rs_error ignored;

    memset(count, 0, (RS_REQ_FAILED + 1) * sizeof(size_t));
    if (rs_state_list(s->state, -1, &rows, &n, &ignored) < 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((size_t)rows[i].status <= RS_REQ_FAILED)
            count[rows[i].status]++;
    rs_state_rows_free(rows, n);
    return true;
}

/* systemctl status shows this line: what waits and what failed. */
static void notify_status(rs_service *s, const char *prefix)
{
    size_t count[RS_REQ_FAILED + 1];
    char line[256];

    if (!count_states(s, count))
        return;
    snprintf(line, sizeof(line), "%sSTATUS=%zu pending, %zu held, %zu failed, %zu published, %llu signatures today",
             prefix ? prefix : "", count[RS_REQ_PENDING], count[RS_REQ_HELD], count[RS_REQ_FAILED],
             count[RS_REQ_PUBLISHED], (unsigned long long)rs_metrics_today(&s->metrics));
    rs_daemon_notify(line);
}

static void write_metrics(rs_service *s)
{
    rs_metrics_state st = { .log_entries = s->log ? rs_translog_size(s->log) : 0, .last_success = s->last_success };
    rs_error err;

    if (!s->cfg.metrics_file || !count_states(s, st.by_state))
        return;
    if (s->log)
        rs_translog_stats_get(s->log, &st.log);
    if (rs_metrics_write(&s->metrics, &st, s->cfg.metrics_file, &err) < 0)
        rs_notef(s->note, s->note_ctx, &(rs_log_fields){ .priority = LOG_WARNING }, "metrics: %s", err.msg);
}

int rs_service_pass(rs_service *s, rs_pass_failures *failed, rs_error *err)
{
    int rc = pass(s, failed, err);

    if (rc == 0)
        s->last_success = (int64_t)time(NULL);
    write_metrics(s);
    return rc;
}

/* How the log's appends shared checkpoints while the service ran: each
 * socket answer waits for its entry's checkpoint, so this is what a
 * request's durability cost. */
static void note_log_groups(rs_service *s)
{
    rs_translog_stats st;

    if (!s->log)
        return;
    rs_translog_stats_get(s->log, &st);
    if (st.checkpoints)
        note(s, "log: %llu entries from %llu appends under %llu checkpoints: %.2f appends a checkpoint (at most %llu), "
                "%.1f syncs and %.2f ms a checkpoint",
             (unsigned long long)st.entries, (unsigned long long)st.appends, (unsigned long long)st.checkpoints,
             (double)st.appends / (double)st.checkpoints, (unsigned long long)st.max_appends,
             (double)st.syncs / (double)st.checkpoints, (double)st.sync_ns / 1e6 / (double)st.checkpoints);
}

int rs_service_serve(rs_service *s, volatile sig_atomic_t *stop, rs_error *err)
{
    rs_server_options o = { &s->cfg, s->by_type, 2, s->log, &s->metrics, s->note, s->note_ctx };
    rs_server *server = NULL;

    /* Half the watchdog's period, in 100 ms ticks, at least one. */
    unsigned long long ping = rs_daemon_watchdog_usec() / 200000;
    bool ready = false;

    if (s->cfg.socket && rs_server_start(&o, &server, err) < 0)
        return -1;
    if (server)
        note(s, "listening on %s", s->cfg.socket);
    while (!*stop) {
        rs_error pass_err;
        rs_pass_failures failed;

        if (rs_service_pass(s, &failed, &pass_err) < 0)
            rs_notef(s->note, s->note_ctx, &(rs_log_fields){ .priority = LOG_ERR }, "%s", pass_err.msg);
        /* Ready once the state, the keys and the socket are up and the
         * first pass has run: a unit ordered after this one finds work
         * done that was waiting. */
        notify_status(s, ready ? NULL : "READY=1\n");
        ready = true;
        for (unsigned long long t = 0; !*stop && t < s->cfg.poll_interval * 10ULL; t++) {
            if (ping && t % ping == 0)
                rs_daemon_notify("WATCHDOG=1");
            nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
        }
    }
    rs_daemon_notify("STOPPING=1");
    if (server)
        rs_server_stop(server);
    note_log_groups(s);
    return rs_translog_checkpoint(s->log, err);
}

static int find_row(rs_service *s, const char *id, rs_state_row **rows, size_t *n, rs_state_row **row, rs_error *err)
{
    *row = NULL;
    if (rs_state_list(s->state, -1, rows, n, err) < 0)
        return -1;
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*rows)[i].req.id, id))
            *row = &(*rows)[i];
    return *row ? 0 : rs_fail(err, "no request %s", id);
}

int rs_service_release(rs_service *s, const char *id, rs_error *err)
{
    if (!rs_valid_request_id(id))
        return rs_fail(err, "'%s' is not a request id", id);
    return rs_state_release(s->state, id, err);
}

int rs_service_release_and_publish(rs_service *s, const char *id, rs_error *err)
{
    rs_state_row *rows = NULL, *row;
    size_t n = 0;
    bool refused;
    int rc;

    if (rs_service_release(s, id, err) < 0)
        return -1;
    rc = find_row(s, id, &rows, &n, &row, err);
    if (rc == 0)
        rc = svc_publish(s, row, &refused, err);
    rs_state_rows_free(rows, n);
    /* The entries it exported are covered by a signed head before this returns. */
    return rc < 0 ? -1 : rs_translog_checkpoint(s->log, err);
}

/* The outputs as the state records them, {name, sha256: HEX, size}, with
 * the digest written as every --json document writes one (docs/json.md). */
static json_t *outputs_json(const char *recorded)
{
    json_auto_t *list = json_loads(recorded, 0, NULL);
    json_t *out = json_array(), *o;
    size_t i;

    json_array_foreach(list, i, o)
        json_array_append_new(out, json_pack("{s:O, s:o*, s:O}", "name", json_object_get(o, "name"), "digest",
                                             rs_json_digest_hex("sha256", json_string_value(json_object_get(o, "sha256"))),
                                             "size", json_object_get(o, "size")));
    return out;
}

/* Members that do not apply to a request are left out (docs/json.md). */
static json_t *row_json(const rs_state_row *r)
{
    bool failed = r->failure && r->status == RS_REQ_FAILED;

    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:s, s:o*, s:o*, s:s*, s:s*, s:o*, s:o*, s:o*}",
                     "id", r->req.id, "package", r->req.package, "source", r->req.source, "suite", r->req.suite,
                     "codename", r->req.codename, "architecture", r->req.architecture, "version", r->req.version,
                     "embargoed", r->req.embargoed, "status", rs_req_status_name(r->status), "arrived",
                     rs_json_time((time_t)r->arrived), "updated", rs_json_time((time_t)r->updated), "reason",
                     r->reason, "failure", failed ? r->failure : NULL, "attempts",
                     failed ? json_integer(r->attempts) : NULL, "retry_at",
                     failed && r->retry_at ? rs_json_time((time_t)r->retry_at) : NULL, "outputs",
                     r->outputs ? outputs_json(r->outputs) : NULL);
}

int rs_service_status(rs_service *s, json_t **out, rs_error *err)
{
    rs_state_row *rows = NULL;
    size_t n = 0;
    json_t *list = json_array();

    if (!list || rs_state_list(s->state, -1, &rows, &n, err) < 0) {
        json_decref(list);
        return list ? -1 : rs_fail(err, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        json_array_append_new(list, row_json(&rows[i]));
    rs_state_rows_free(rows, n);
    *out = json_pack("{s:o}", "requests", list);
    return *out ? 0 : rs_fail(err, "out of memory");
}

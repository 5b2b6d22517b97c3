/* The service's metrics, in Prometheus' text exposition format, written
 * whole (temporary file, then rename) to the configured metrics_file on
 * every pass, for node_exporter's textfile collector: the convention for
 * a daemon with no HTTP server. Counters count from the service's start,
 * as Prometheus expects of a process's counters. */
#ifndef RS_METRICS_H
#define RS_METRICS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "base/error.h"
#include "pipeline/files_json.h"
#include "translog/log.h"

typedef enum { RS_FACE_ARCHIVE, RS_FACE_SOCKET, RS_FACES } rs_face;

/* Upper bounds of the latency histogram's buckets, in seconds: a socket
 * signature takes milliseconds on a file key and up to a second on a slow
 * token; a whole template, seconds to minutes. */
#define RS_METRICS_BUCKETS 12

typedef struct rs_metrics {
    pthread_mutex_t mu;
    uint64_t signatures[RS_FACES][RS_SIG_TYPES];        /* by face and rs_sig_type */
    uint64_t buckets[RS_FACES][RS_METRICS_BUCKETS];
    uint64_t latency_count[RS_FACES];
    double latency_sum[RS_FACES];
    uint64_t token_errors;
    uint64_t today;                          /* signatures since UTC midnight (today_day) */
    int64_t today_day;
} rs_metrics;

void rs_metrics_init(rs_metrics *m);
void rs_metrics_destroy(rs_metrics *m);
/* n signatures of one sig_type made on a face. */
void rs_metrics_signed(rs_metrics *m, rs_face face, int sig_type, uint64_t n);
/* Seconds from start (CLOCK_MONOTONIC) to now. */
double rs_metrics_since(const struct timespec *start);
/* One socket request, or one archive request's template, signed in seconds. */
void rs_metrics_latency(rs_metrics *m, rs_face face, double seconds);
void rs_metrics_token_error(rs_metrics *m);
/* Signatures made today (UTC), on either face, since the service started. */
uint64_t rs_metrics_today(rs_metrics *m);

/* What the service adds from its state at each pass. */
typedef struct rs_metrics_state {
    size_t by_state[5];          /* rs_req_status order */
    uint64_t log_entries;
    int64_t last_success;        /* Unix time of the last pass that ran whole; 0: none */
    rs_translog_stats log;       /* how appends shared checkpoints */
} rs_metrics_state;

int rs_metrics_write(rs_metrics *m, const rs_metrics_state *st, const char *path, rs_error *err);

#endif

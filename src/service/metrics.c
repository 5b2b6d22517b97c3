#include "service/metrics.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/file.h"

static const double bounds[RS_METRICS_BUCKETS] = { 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60, 300, 1800 };
static const char *const face_names[RS_FACES] = { "archive", "socket" };
static const char *const type_names[RS_SIG_TYPES] = { "efi", "linux-module" };
static const char *const state_names[5] = { "pending", "signed", "held", "published", "failed" };

void rs_metrics_init(rs_metrics *m)
{
    memset(m, 0, sizeof(*m));
    pthread_mutex_init(&m->mu, NULL);
}

void rs_metrics_destroy(rs_metrics *m)
{
    pthread_mutex_destroy(&m->mu);
}

/* A new UTC day starts the day's count again. Called with mu held. */
static void roll_day(rs_metrics *m)
{
    int64_t day = (int64_t)time(NULL) / 86400;

    if (day != m->today_day) {
        m->today_day = day;
        m->today = 0;
    }
}

void rs_metrics_signed(rs_metrics *m, rs_face face, int sig_type, uint64_t n)
{
    if (!m || face >= RS_FACES || sig_type < 0 || sig_type > 1)
        return;
    pthread_mutex_lock(&m->mu);
    m->signatures[face][sig_type] += n;
    roll_day(m);
    m->today += n;
    pthread_mutex_unlock(&m->mu);
}

uint64_t rs_metrics_today(rs_metrics *m)
{
    uint64_t n;

    pthread_mutex_lock(&m->mu);
    roll_day(m);
    n = m->today;
    pthread_mutex_unlock(&m->mu);
    return n;
}

double rs_metrics_since(const struct timespec *start)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

void rs_metrics_latency(rs_metrics *m, rs_face face, double seconds)
{
    if (!m || face >= RS_FACES)
        return;
    pthread_mutex_lock(&m->mu);
    for (int b = 0; b < RS_METRICS_BUCKETS; b++)
        m->buckets[face][b] += seconds <= bounds[b];
    m->latency_count[face]++;
    m->latency_sum[face] += seconds;
    pthread_mutex_unlock(&m->mu);
}

void rs_metrics_token_error(rs_metrics *m)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->mu);
    m->token_errors++;
    pthread_mutex_unlock(&m->mu);
}

static void histogram(FILE *f, const rs_metrics *m, rs_face face)
{
    for (int b = 0; b < RS_METRICS_BUCKETS; b++)
        fprintf(f, "reprosign_signing_duration_seconds_bucket{face=\"%s\",le=\"%g\"} %llu\n", face_names[face],
                bounds[b], (unsigned long long)m->buckets[face][b]);
    fprintf(f, "reprosign_signing_duration_seconds_bucket{face=\"%s\",le=\"+Inf\"} %llu\n", face_names[face],
            (unsigned long long)m->latency_count[face]);
    fprintf(f, "reprosign_signing_duration_seconds_sum{face=\"%s\"} %.6f\n", face_names[face], m->latency_sum[face]);
    fprintf(f, "reprosign_signing_duration_seconds_count{face=\"%s\"} %llu\n", face_names[face],
            (unsigned long long)m->latency_count[face]);
}

/* Each answer waits for its entry's checkpoint: how many appends (a
 * socket request, or an archive request's template) shared one, and the
 * syncs they cost. */
static void log_groups(FILE *f, const rs_translog_stats *l)
{
    uint64_t below = 0;

    fprintf(f, "# HELP reprosign_log_checkpoints_total Checkpoints the service's appends wrote.\n"
               "# TYPE reprosign_log_checkpoints_total counter\nreprosign_log_checkpoints_total %llu\n"
               "# HELP reprosign_log_syncs_total fsync and fdatasync calls that made those checkpoints durable.\n"
               "# TYPE reprosign_log_syncs_total counter\nreprosign_log_syncs_total %llu\n"
               "# HELP reprosign_log_appends_per_checkpoint Appends one checkpoint held (group commit).\n"
               "# TYPE reprosign_log_appends_per_checkpoint histogram\n",
            (unsigned long long)l->checkpoints, (unsigned long long)l->syncs);
    for (int b = 0; b + 1 < RS_TRANSLOG_GROUP_BUCKETS; b++)
        fprintf(f, "reprosign_log_appends_per_checkpoint_bucket{le=\"%llu\"} %llu\n", 1ULL << b,
                (unsigned long long)(below += l->by_appends[b]));
    fprintf(f, "reprosign_log_appends_per_checkpoint_bucket{le=\"+Inf\"} %llu\n"
               "reprosign_log_appends_per_checkpoint_sum %llu\nreprosign_log_appends_per_checkpoint_count %llu\n",
            (unsigned long long)l->checkpoints, (unsigned long long)l->appends, (unsigned long long)l->checkpoints);
}

static void render(FILE *f, const rs_metrics *m, const rs_metrics_state *st)
{
    fprintf(f, "# HELP reprosign_requests Signing requests in the service's state, by state.\n"
               "# TYPE reprosign_requests gauge\n");
    for (int i = 0; i < 5; i++)
        fprintf(f, "reprosign_requests{state=\"%s\"} %zu\n", state_names[i], st->by_state[i]);
    fprintf(f, "# HELP reprosign_signatures_total Signatures made since the service started, by face, key "
               "and sig_type.\n# TYPE reprosign_signatures_total counter\n");
    for (int face = 0; face < RS_FACES; face++)
        for (int t = 0; t < RS_SIG_TYPES; t++)
            fprintf(f, "reprosign_signatures_total{face=\"%s\",key=\"%s\",sig_type=\"%s\"} %llu\n", face_names[face],
                    type_names[t], type_names[t], (unsigned long long)m->signatures[face][t]);
    fprintf(f, "# HELP reprosign_signing_duration_seconds Time to sign one socket request, or one archive "
               "request's template.\n# TYPE reprosign_signing_duration_seconds histogram\n");
    for (int face = 0; face < RS_FACES; face++)
        histogram(f, m, (rs_face)face);
    fprintf(f, "# HELP reprosign_token_errors_total Signatures a key or token failed to make.\n"
               "# TYPE reprosign_token_errors_total counter\nreprosign_token_errors_total %llu\n",
            (unsigned long long)m->token_errors);
    fprintf(f, "# HELP reprosign_log_entries Entries in the transparency log.\n"
               "# TYPE reprosign_log_entries gauge\nreprosign_log_entries %llu\n",
            (unsigned long long)st->log_entries);
    log_groups(f, &st->log);
    fprintf(f, "# HELP reprosign_last_success_timestamp_seconds When the last pass over the archive ran whole.\n"
               "# TYPE reprosign_last_success_timestamp_seconds gauge\n"
               "reprosign_last_success_timestamp_seconds %lld\n",
            (long long)st->last_success);
}

int rs_metrics_write(rs_metrics *m, const rs_metrics_state *st, const char *path, rs_error *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    int rc;

    if (!f)
        return rs_fail(err, "out of memory");
    pthread_mutex_lock(&m->mu);
    render(f, m, st);
    pthread_mutex_unlock(&m->mu);
    if (fclose(f) != 0) {
        free(text);
        return rs_fail(err, "out of memory");
    }
    /* Read by node_exporter, which runs as another user. */
    rc = rs_write_public_file(path, text, len, 0644, err);   /* the service's umask is 077 */
    free(text);
    return rc < 0 ? rs_error_prefix(err, "%s", path) : 0;
}

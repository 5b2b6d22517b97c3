#include "base/progress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A terminal line redrawn more often than this only flickers; a log gets
 * a line no more often than this, so a long run stays a few lines. */
#define TTY_REDRAW_SECONDS 0.1
#define LOG_LINE_SECONDS 5.0

static double monotonic_seconds(void *ctx)
{
    struct timespec ts;

    (void)ctx;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A terminal that cannot go back and clear a line (TERM=dumb, as in an
 * Emacs shell buffer) gets the plain lines a log gets. */
rs_progress_mode rs_progress_mode_for_stderr(bool quiet)
{
    const char *term = getenv("TERM");

    if (quiet)
        return RS_PROGRESS_QUIET;
    return isatty(STDERR_FILENO) && !(term && !strcmp(term, "dumb")) ? RS_PROGRESS_TTY : RS_PROGRESS_LINES;
}

void rs_progress_use(rs_progress *p, FILE *out, rs_progress_clock clock, void *clock_ctx)
{
    p->out = out;
    p->clock = clock;
    p->clock_ctx = clock_ctx;
    p->started = clock(clock_ctx);
    /* A terminal shows the first file at once; a log waits its interval. */
    p->last_drawn = p->mode == RS_PROGRESS_TTY ? -INFINITY : p->started;
}

void rs_progress_init(rs_progress *p, const char *command, const char *verb, rs_progress_mode mode)
{
    p->command = command;
    p->verb = verb;
    p->mode = mode;
    atomic_init(&p->total, 0);
    atomic_init(&p->hashed, 0);
    atomic_init(&p->signatures, 0);
    atomic_init(&p->bytes, 0);
    atomic_init(&p->hashing_ended, NAN);
    atomic_flag_clear(&p->drawing);
    p->line_open = false;
    rs_progress_use(p, stderr, monotonic_seconds, NULL);
}

/* ---- what the lines say ---- */

static void format_bytes(uint64_t n, char *buf, size_t cap)
{
    static const char *const units[] = { "kB", "MB", "GB", "TB" };
    double v = (double)n;
    size_t u = 0;

    if (n < 1000) {
        snprintf(buf, cap, "%u B", (unsigned)n);
        return;
    }
    for (v /= 1000; v >= 1000 && u + 1 < sizeof(units) / sizeof(*units); u++)
        v /= 1000;
    snprintf(buf, cap, "%.1f %s", v, units[u]);
}

/* "0:07", "12:30", "1:02:03". */
static void format_clock(double seconds, char *buf, size_t cap)
{
    unsigned long s = (unsigned long)seconds;

    s += (double)s < seconds;   /* rounded up: "0:00" only when done */

    if (s >= 3600)
        snprintf(buf, cap, "%lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(buf, cap, "%lu:%02lu", s / 60, s % 60);
}

/* "0.4 s" for a short run, a clock beyond a minute. */
static void format_duration(double seconds, char *buf, size_t cap)
{
    if (seconds < 60)
        snprintf(buf, cap, "%.1f s", seconds);
    else
        format_clock(seconds, buf, cap);
}

/* Over the bytes hashed and the time hashing took (to now, while it goes on). */
static double megabytes_per_second(const rs_progress *p, double now)
{
    double ended = atomic_load(&p->hashing_ended), span = (isnan(ended) ? now : ended) - p->started;

    return span > 0 ? (double)atomic_load(&p->bytes) / 1e6 / span : 0.0;
}

/* Seconds left at the current pace: of hashing while files remain to be
 * hashed, then of signing; negative while there is nothing to go on. */
static double seconds_left(const rs_progress *p, double now, size_t total, size_t hashed, size_t signatures)
{
    double ended = atomic_load(&p->hashing_ended);

    if (total == 0)
        return -1;
    if (isnan(ended))
        return hashed && now > p->started ? (double)(total - hashed) * (now - p->started) / (double)hashed : -1;
    if (signatures >= total)
        return 0;
    return signatures && now > ended ? (double)(total - signatures) * (now - ended) / (double)signatures : -1;
}

static size_t at_most(size_t n, size_t total)
{
    return total && n > total ? total : n;
}

void rs_progress_format_line(const rs_progress *p, double now, char *buf, size_t cap)
{
    size_t total = atomic_load(&p->total);
    /* A file hashed twice (a .deb's early digest not kept) counts once toward the total. */
    size_t hashed = at_most(atomic_load(&p->hashed), total);
    size_t signatures = at_most(atomic_load(&p->signatures), total);
    double left = seconds_left(p, now, total, hashed, signatures);
    char eta[32] = "--:--";

    if (left >= 0)
        format_clock(left, eta, sizeof(eta));
    if (total)
        snprintf(buf, cap, "reprosign %s: hashed %zu/%zu files, %zu/%zu signatures, %.1f MB/s, ETA %s", p->command,
                 hashed, total, signatures, total, megabytes_per_second(p, now), eta);
    else
        snprintf(buf, cap, "reprosign %s: hashed %zu files, %zu signatures, %.1f MB/s", p->command, hashed,
                 signatures, megabytes_per_second(p, now));
}

void rs_progress_format_summary(const rs_progress *p, double now, char *buf, size_t cap)
{
    size_t total = atomic_load(&p->total);
    char bytes[32], took[32];

    format_bytes(atomic_load(&p->bytes), bytes, sizeof(bytes));
    format_duration(now - p->started, took, sizeof(took));
    snprintf(buf, cap, "reprosign %s: %zu files, %s hashed in %s (%.1f MB/s), %zu signatures %s", p->command,
             total ? total : atomic_load(&p->hashed), bytes, took, megabytes_per_second(p, now),
             atomic_load(&p->signatures), p->verb);
}

/* ---- counting, from any thread ---- */

/* Whichever thread gets here while no other draws, and once the interval
 * has passed, draws; the others go back to work at once. */
static void maybe_draw(rs_progress *p)
{
    char line[256];
    double now;

    if (p->mode == RS_PROGRESS_QUIET || atomic_flag_test_and_set(&p->drawing))
        return;
    now = p->clock(p->clock_ctx);
    if (now - p->last_drawn >= (p->mode == RS_PROGRESS_TTY ? TTY_REDRAW_SECONDS : LOG_LINE_SECONDS)) {
        p->last_drawn = now;
        rs_progress_format_line(p, now, line, sizeof(line));
        if (p->mode == RS_PROGRESS_TTY) {
            fprintf(p->out, "\r\033[K%s", line);   /* back to the line's start, cleared */
            p->line_open = true;
        } else {
            fprintf(p->out, "%s\n", line);
        }
        fflush(p->out);
    }
    atomic_flag_clear(&p->drawing);
}

void rs_progress_total(rs_progress *p, size_t files)
{
    if (p)
        atomic_store(&p->total, files);
}

void rs_progress_hashed(rs_progress *p, uint64_t bytes)
{
    size_t total;

    if (!p)
        return;
    atomic_fetch_add(&p->bytes, bytes);
    total = atomic_load(&p->total);
    if (atomic_fetch_add(&p->hashed, 1) + 1 == total && total)
        atomic_store(&p->hashing_ended, p->clock(p->clock_ctx));
    maybe_draw(p);
}

void rs_progress_signed(rs_progress *p)
{
    if (!p)
        return;
    atomic_fetch_add(&p->signatures, 1);
    maybe_draw(p);
}

void rs_progress_finish(rs_progress *p, bool ok)
{
    char line[256];

    if (!p || p->mode == RS_PROGRESS_QUIET)
        return;
    while (atomic_flag_test_and_set(&p->drawing))
        ;   /* a worker still drawing: the pool has joined, so not for long */
    if (p->line_open)
        fputs("\r\033[K", p->out);
    p->line_open = false;
    if (ok) {
        rs_progress_format_summary(p, p->clock(p->clock_ctx), line, sizeof(line));
        fprintf(p->out, "%s\n", line);
    }
    fflush(p->out);
    atomic_flag_clear(&p->drawing);
}

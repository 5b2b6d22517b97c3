/* The progress line and the summary, on a clock the test moves: the rate
 * over the bytes hashed, the ETA, the redraw intervals on a terminal and in
 * a log, nothing when quiet, and exact counts from many threads. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/progress.h"
#include "harness.h"

typedef struct fake_clock {
    double now;
} fake_clock;

static double read_clock(void *ctx)
{
    return ((fake_clock *)ctx)->now;
}

typedef struct capture {
    char *text;
    size_t len;
    FILE *f;
} capture;

static void start(rs_progress *p, rs_progress_mode mode, capture *c, fake_clock *clk, const char *verb)
{
    *c = (capture){ 0 };
    c->f = open_memstream(&c->text, &c->len);
    rs_progress_init(p, "sign-template", verb, mode);
    rs_progress_use(p, c->f, read_clock, clk);
}

static const char *captured(capture *c)
{
    fflush(c->f);
    return c->text ? c->text : "";
}

static void stop(capture *c)
{
    fclose(c->f);
    free(c->text);
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;

    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void check_line(const rs_progress *p, double now, const char *want)
{
    char line[256];

    rs_progress_format_line(p, now, line, sizeof(line));
    if (strcmp(line, want) != 0)
        fprintf(stderr, "got  %s\nwant %s\n", line, want);
    CHECK(!strcmp(line, want));
}

static void check_summary(const rs_progress *p, double now, const char *want)
{
    char line[256];

    rs_progress_format_summary(p, now, line, sizeof(line));
    if (strcmp(line, want) != 0)
        fprintf(stderr, "got  %s\nwant %s\n", line, want);
    CHECK(!strcmp(line, want));
}

/* 4 MB over 2 s is 2.0 MB/s; 6 files left at 0.5 s each is 3 s. Once all
 * are hashed the rate stays that of hashing, and the ETA is signing's. */
static void test_rate_and_eta(void)
{
    fake_clock clk = { 100 };
    rs_progress p;
    capture c;

    start(&p, RS_PROGRESS_QUIET, &c, &clk, "made");
    rs_progress_total(&p, 10);
    check_line(&p, 100, "reprosign sign-template: hashed 0/10 files, 0/10 signatures, 0.0 MB/s, ETA --:--");
    clk.now = 102;
    for (int i = 0; i < 4; i++)
        rs_progress_hashed(&p, 1000000);
    check_line(&p, 102, "reprosign sign-template: hashed 4/10 files, 0/10 signatures, 2.0 MB/s, ETA 0:03");
    clk.now = 105;
    for (int i = 0; i < 6; i++)
        rs_progress_hashed(&p, 1000000);
    clk.now = 106;
    for (int i = 0; i < 5; i++)
        rs_progress_signed(&p);
    check_line(&p, 106, "reprosign sign-template: hashed 10/10 files, 5/10 signatures, 2.0 MB/s, ETA 0:01");
    /* Rounded up: a fraction of a second left is not "done". */
    check_line(&p, 106.5, "reprosign sign-template: hashed 10/10 files, 5/10 signatures, 2.0 MB/s, ETA 0:02");
    for (int i = 0; i < 5; i++)
        rs_progress_signed(&p);
    check_line(&p, 107, "reprosign sign-template: hashed 10/10 files, 10/10 signatures, 2.0 MB/s, ETA 0:00");
    check_summary(&p, 107, "reprosign sign-template: 10 files, 10.0 MB hashed in 7.0 s (2.0 MB/s), 10 signatures made");
    /* A file hashed twice counts once toward the total. */
    rs_progress_hashed(&p, 1000000);
    check_line(&p, 107, "reprosign sign-template: hashed 10/10 files, 10/10 signatures, 2.2 MB/s, ETA 0:00");
    CHECK(!strcmp(captured(&c), ""));   /* quiet */
    rs_progress_finish(&p, true);
    CHECK(!strcmp(captured(&c), ""));
    stop(&c);
}

static void test_summary_units(void)
{
    fake_clock clk = { 0 };
    rs_progress p;
    capture c;

    start(&p, RS_PROGRESS_QUIET, &c, &clk, "attached");
    rs_progress_hashed(&p, 999);
    check_summary(&p, 0.25, "reprosign sign-template: 1 files, 999 B hashed in 0.2 s (0.0 MB/s), 0 signatures attached");
    rs_progress_hashed(&p, 1001);
    check_line(&p, 0.5, "reprosign sign-template: hashed 2 files, 0 signatures, 0.0 MB/s");
    rs_progress_total(&p, 3);
    clk.now = 65;   /* hashing ends: the rate is over its 65 s from now on */
    rs_progress_hashed(&p, 3 * 1000 * 1000 * 1000ULL);
    rs_progress_signed(&p);
    check_summary(&p, 65, "reprosign sign-template: 3 files, 3.0 GB hashed in 1:05 (46.2 MB/s), 1 signatures attached");
    check_summary(&p, 3725, "reprosign sign-template: 3 files, 3.0 GB hashed in 1:02:05 (46.2 MB/s), 1 signatures attached");
    stop(&c);
}

/* A terminal: the first file at once, then at most every 0.1 s, always
 * back to the line's start and cleared; the summary replaces the line. */
static void test_terminal(void)
{
    fake_clock clk = { 50 };
    rs_progress p;
    capture c;
    const char *out;

    start(&p, RS_PROGRESS_TTY, &c, &clk, "made");
    rs_progress_total(&p, 100);
    rs_progress_hashed(&p, 1000);
    CHECK(count(captured(&c), "\r\033[K") == 1);
    for (int i = 0; i < 20; i++) {   /* 20 files within 0.08 s: not redrawn */
        clk.now += 0.004;
        rs_progress_hashed(&p, 1000);
    }
    CHECK(count(captured(&c), "\r\033[K") == 1);
    clk.now = 50.1;
    rs_progress_signed(&p);
    CHECK(count(captured(&c), "\r\033[K") == 2);
    CHECK(strstr(captured(&c), "\r\033[Kreprosign sign-template: hashed 21/100 files, 1/100 signatures, ") != NULL);
    CHECK(!strchr(captured(&c), '\n'));
    clk.now = 51;
    rs_progress_finish(&p, true);
    out = captured(&c);
    CHECK(count(out, "\r\033[K") == 3);
    CHECK(strstr(out, "\r\033[Kreprosign sign-template: 100 files, 21.0 kB hashed in 1.0 s (0.0 MB/s), 1 signatures made\n") !=
          NULL);
    CHECK(count(out, "\n") == 1);
    stop(&c);

    /* A failed run: the line is cleared for the error, and no summary. */
    start(&p, RS_PROGRESS_TTY, &c, &clk, "made");
    rs_progress_hashed(&p, 1000);
    rs_progress_finish(&p, false);
    out = captured(&c);
    CHECK(count(out, "\r\033[K") == 2);
    CHECK(!strstr(out, "hashed in"));
    stop(&c);
}

/* A log: plain lines, the first after 5 s, then at most every 5 s. */
static void test_log(void)
{
    fake_clock clk = { 0 };
    rs_progress p;
    capture c;
    const char *out;

    start(&p, RS_PROGRESS_LINES, &c, &clk, "made");
    rs_progress_total(&p, 1000);
    for (int i = 0; i < 49; i++) {   /* 0 to 4.8 s */
        rs_progress_hashed(&p, 1000);
        clk.now += 0.1;
    }
    CHECK(!strcmp(captured(&c), ""));
    clk.now = 5.0;
    rs_progress_hashed(&p, 1000);
    CHECK(count(captured(&c), "\n") == 1);
    CHECK(!strncmp(captured(&c), "reprosign sign-template: hashed 50/1000 files, 0/1000 signatures, ", 66));
    for (int i = 0; i < 49; i++) {   /* to 9.9 s */
        clk.now += 0.1;
        rs_progress_signed(&p);
    }
    CHECK(count(captured(&c), "\n") == 1);
    clk.now = 10.0;
    rs_progress_signed(&p);
    CHECK(count(captured(&c), "\n") == 2);
    rs_progress_finish(&p, true);
    out = captured(&c);
    CHECK(count(out, "\n") == 3);
    CHECK(!strchr(out, '\r') && !strchr(out, '\033'));
    CHECK(strstr(out, "\nreprosign sign-template: 1000 files, 50.0 kB hashed in 10.0 s (0.0 MB/s), 50 signatures made\n"));
    stop(&c);
}

#define THREADS 4
#define PER_THREAD 5000

static void *worker(void *arg)
{
    for (int i = 0; i < PER_THREAD; i++) {
        rs_progress_hashed(arg, 3);
        rs_progress_signed(arg);
    }
    return NULL;
}

/* Workers of a pool count at once: nothing is lost, and draws never
 * overlap (every redraw is one whole line). */
static void test_threads(void)
{
    fake_clock clk = { 0 };
    rs_progress p;
    capture c;
    pthread_t t[THREADS];

    start(&p, RS_PROGRESS_TTY, &c, &clk, "made");
    rs_progress_total(&p, THREADS * PER_THREAD);
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, &p);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    CHECK(atomic_load(&p.hashed) == THREADS * PER_THREAD);
    CHECK(atomic_load(&p.signatures) == THREADS * PER_THREAD);
    CHECK(atomic_load(&p.bytes) == 3 * THREADS * PER_THREAD);
    CHECK(count(captured(&c), "\r\033[K") == 1);   /* the clock stood still */
    stop(&c);
}

int main(void)
{
    rs_progress_hashed(NULL, 1);   /* no progress asked for */
    rs_progress_signed(NULL);
    rs_progress_total(NULL, 1);
    rs_progress_finish(NULL, true);
    test_rate_and_eta();
    test_summary_units();
    test_terminal();
    test_log();
    test_threads();
    return harness_finish("test_progress");
}

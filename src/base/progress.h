/* What a long command is doing, on stderr: files hashed and signed out of
 * the total, the throughput over the bytes actually hashed, and an ETA;
 * then one summary line (files, bytes, time, signatures).
 *
 * Counted from any thread (a batch's workers call it as each file is
 * done). On a terminal the line is redrawn in place at most ten times a
 * second; otherwise a plain line is printed at most every five seconds,
 * so a build log stays short; with --quiet nothing is printed.
 *
 * Every function takes NULL for "no progress": a pipeline calls them
 * through the pointer in its options, which only the CLI sets. */
#ifndef RS_PROGRESS_H
#define RS_PROGRESS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum rs_progress_mode {
    RS_PROGRESS_QUIET,   /* --quiet: nothing at all */
    RS_PROGRESS_LINES,   /* stderr is a file or a pipe: a plain line now and then */
    RS_PROGRESS_TTY,     /* stderr is a terminal: one line, redrawn in place */
} rs_progress_mode;

/* Seconds on a clock that never goes back; tests give their own. */
typedef double (*rs_progress_clock)(void *ctx);

typedef struct rs_progress {
    const char *command;       /* "sign-template": starts every line */
    const char *verb;          /* what happens to a file after its hashing: "signed", "attached" */
    rs_progress_mode mode;
    FILE *out;
    rs_progress_clock clock;
    void *clock_ctx;
    double started;
    atomic_size_t total;       /* files the run handles; 0 until known */
    atomic_size_t hashed;
    atomic_size_t signatures;
    atomic_uint_fast64_t bytes;     /* hashed, summed as each file's digest is done */
    _Atomic double hashing_ended;   /* when the last file was hashed; 0 before */
    atomic_flag drawing;       /* held by the one thread that draws */
    double last_drawn;         /* under `drawing` */
    bool line_open;            /* under `drawing`: a terminal line to clear */
} rs_progress;

/* Quiet, or what stderr is (a terminal that can redraw a line, or not). */
rs_progress_mode rs_progress_mode_for_stderr(bool quiet);

/* Starts the clock. Lines go to stderr. */
void rs_progress_init(rs_progress *p, const char *command, const char *verb, rs_progress_mode mode);
/* For tests: another stream and clock (the clock restarts from its now). */
void rs_progress_use(rs_progress *p, FILE *out, rs_progress_clock clock, void *clock_ctx);

/* The number of files the run handles, once it is known. */
void rs_progress_total(rs_progress *p, size_t files);
/* One file's digest is done, over `bytes` bytes read and hashed. */
void rs_progress_hashed(rs_progress *p, uint64_t bytes);
/* One file's signature is done. */
void rs_progress_signed(rs_progress *p);

/* Clears the terminal line; after a run that succeeded, prints the summary.
 * (A run that failed ends with its error instead.) */
void rs_progress_finish(rs_progress *p, bool ok);

/* The progress line and the summary, without a newline; for the tests. */
void rs_progress_format_line(const rs_progress *p, double now, char *buf, size_t cap);
void rs_progress_format_summary(const rs_progress *p, double now, char *buf, size_t cap);

#endif

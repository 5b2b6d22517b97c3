/* Arbitrary bytes as a 1.0 source's .diff.gz (gzip-compressed or not: the
 * raw reader takes both), the way log monitor reads one: unified-diff
 * headers and hunks by their line counts, the files ending in ".sig" the
 * diff creates rebuilt byte for byte, any it changes reported as not
 * judged. With an empty log every rebuilt signature is one the log lacks,
 * so each published one must be reported, and nothing else. */
#include <stdint.h>
#include <stdlib.h>

#include "archive/archive_lib.h"
#include "fuzz_keys.h"
#include "translog/monitor_internal.h"

static char in_path[64];
static int in_fd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    rs_error err;

    (void)argc;
    (void)argv;
    in_fd = fuzz_memfd("fuzz-monitor-diff", in_path, sizeof(in_path));
    if (rs_archive_load(&err) < 0)
        fuzz_die("rs_archive_load", err.msg);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    sig_set logged = { 0 }, digests = { 0 }, published = { 0 };
    rs_monitor_report r = { 0 };
    monitor_walk w = { &logged, &digests, &published, NULL, &r };
    rs_error err;

    fuzz_memfd_fill(in_fd, data, len);
    if (monitor_scan_diff(&w, in_path, &err) == 0 && r.unlogged != published.n)
        fuzz_bug("a rebuilt signature was not reported as unlogged", NULL);
    free(published.h);
    return 0;
}

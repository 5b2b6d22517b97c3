/* The one way the project runs another program: argv in a directory, its
 * output captured, and on failure the tool and the last line it printed
 * reported. */
#ifndef RS_SPAWN_H
#define RS_SPAWN_H

#include <stddef.h>

#include "base/error.h"

/* Runs argv[0] (found on PATH) with stdin from /dev/null, stdout and stderr
 * into a memfd; dir may be NULL (the current directory). */
int rs_run_tool(char *const argv[], const char *dir, rs_error *err);

typedef struct rs_tool_opts {
    const char *dir;          /* where it runs; NULL: the current directory */
    /* Where its standard output goes (a status channel to read back);
     * -1: with its standard error, into the log the error quotes. */
    int stdout_fd;
    /* Descriptors the child inherits under the same numbers (close-on-exec
     * here, so no other child gets them), e.g. for /dev/fd/N arguments. */
    const int *pass_fds;
    size_t n_pass_fds;
} rs_tool_opts;

int rs_run_tool_with(char *const argv[], const rs_tool_opts *opts, rs_error *err);

#endif

/* The one way the project runs another program: argv in a directory, its
 * output captured, and on failure the last line it printed reported. */
#ifndef RS_SPAWN_H
#define RS_SPAWN_H

#include "base/error.h"

/* dir may be NULL (the current directory). */
int rs_run_tool(char *const argv[], const char *dir, rs_error *err);

#endif

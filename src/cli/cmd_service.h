/* `reprosign service`: the subcommands that run the service are in
 * cmd_service.c, those that look at or change its state in
 * cmd_service_state.c. */
#ifndef RS_CMD_SERVICE_H
#define RS_CMD_SERVICE_H

#include <stdbool.h>

#include "service/daemon.h"

typedef struct cli_service_args {
    const char *state, *config;
    const char *status;          /* status --status: only requests in this state */
    bool once, json, all_failed;
} cli_service_args;

/* Prints the service's notes: to the journal, or stderr with a time. */
void cli_service_note(void *ctx, const rs_log_fields *fields, const char *line);

int cli_service_status(const cli_service_args *a);
int cli_service_release(const cli_service_args *a, const char *id);
int cli_service_retry(const cli_service_args *a, const char *id);

#endif

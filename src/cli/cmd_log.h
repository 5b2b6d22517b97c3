/* The `log` subcommands, split over cmd_log.c and cmd_log_proof.c. */
#ifndef RS_CMD_LOG_H
#define RS_CMD_LOG_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/cli.h"
#include "translog/note.h"

#define LOG_MAX_WITNESSES 64

typedef struct log_args {
    const char *vkey, *key, *output, *entry, *cert, *archive;
    const char *witness[LOG_MAX_WITNESSES];
    size_t n_witnesses;
    long min_witnesses;
    long batch;
    bool cosigner;
    char **pos;          /* the positional arguments after the subcommand */
    int n_pos;
} log_args;

/* Loads --vkey (required: a log is checked against a key the user pinned,
 * never against key material found beside it) and the --witness keys. */
int log_load_keys(const log_args *a, rs_note_key *vkey, rs_note_key *witnesses);
void log_free_keys(rs_note_key *vkey, rs_note_key *witnesses, size_t n);

int log_prove(const log_args *a);
int log_verify_proof(const log_args *a);
int log_consistency(const log_args *a);
int log_cosign(const log_args *a);

#endif

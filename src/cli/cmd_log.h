/* The `log` subcommands: cmd_log.c parses the options and runs the rest
 * (keygen, verify, append, migrate, monitor), cmd_log_proof.c the proofs
 * (prove, verify-proof, consistency, cosign); cmd_log_common.c holds what
 * both use. cmd_log_proof.c reports usage errors through log_args.cmd, so
 * that it never reaches back into cmd_log.c. */
#ifndef RS_CMD_LOG_H
#define RS_CMD_LOG_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/cli.h"
#include "translog/merkle.h"
#include "translog/note.h"

#define LOG_MAX_WITNESSES 64
#define LOG_MAX_CERTS 16   /* monitor: the service's certificates */

typedef struct log_args {
    const rs_command *cmd;  /* `log`, whose synopsis a usage error prints */
    const char *vkey, *key, *output, *entry, *cert, *archive;
    const char *witness[LOG_MAX_WITNESSES];
    const char *certs[LOG_MAX_CERTS];   /* every --cert: monitor takes several */
    size_t n_certs;
    size_t n_witnesses;
    long min_witnesses;
    long batch;
    bool cosigner;
    bool json;           /* verify, prove, verify-proof, consistency: one JSON document */
    char **pos;          /* the positional arguments after the subcommand */
    int n_pos;
} log_args;

/* cmd_log_common.c: loads --vkey (required: a log is checked against a key
 * the user pinned, never against key material found beside it) and the
 * --witness keys. */
int log_load_keys(const log_args *a, rs_note_key *vkey, rs_note_key *witnesses);
void log_free_keys(rs_note_key *vkey, rs_note_key *witnesses, size_t n);

/* A tree hash as a --json digest ("sha256:HEX"), a list of them, and a
 * tree as {"size", "root"} (docs/json.md). */
json_t *log_hash_json(const rs_hash *h);
json_t *log_hash_list_json(const rs_hash_list *l);
json_t *log_tree_json(uint64_t size, const rs_hash *root);

/* cmd_log_proof.c */
int log_prove(const log_args *a);
int log_verify_proof(const log_args *a);
int log_consistency(const log_args *a);
int log_cosign(const log_args *a);

#endif

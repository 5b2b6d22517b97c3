/* The second stage: attach a tree of detached signatures to the rebuilt
 * files. All or nothing: if any signature does not fit its file (the
 * rebuild did not reproduce), no file is written. */
#ifndef RS_ATTACH_TREE_H
#define RS_ATTACH_TREE_H

#include <openssl/x509.h>
#include <stdbool.h>

#include "base/error.h"
#include "base/progress.h"

typedef struct rs_attach_tree_options {
    const char *signatures;   /* directory of <path>.sig files */
    const char *root;         /* where <path> lives */
    const char *output;       /* NULL: in place under root */
    const char *suffix;       /* appended to each output name; NULL: none */
    X509 *cert;               /* signer certificate, for formats whose signatures carry none */
    unsigned jobs;
    rs_progress *progress;    /* NULL: none */
    /* Called once every signature is checked, before any file is written
     * (NULL: nothing); a test changes a file there. */
    void (*checked)(void *ctx);
    void *checked_ctx;
} rs_attach_tree_options;

/* One line per file that failed, for the caller to print. */
typedef struct rs_attach_tree_report {
    char **problems;
    size_t n_problems;
    size_t n_files;
    bool needs_cert;             /* refused: the tree has signatures that carry no certificate */
} rs_attach_tree_report;

int rs_attach_tree(const rs_attach_tree_options *o, rs_attach_tree_report *report, rs_error *err);
void rs_attach_tree_report_free(rs_attach_tree_report *r);

#endif

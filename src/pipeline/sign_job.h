/* sign-template's shared state, for the files that each do one step of
 * it: plan (sign_plan.c), digest (sign_digest.c), sign (sign_sign.c),
 * manifest (sign_manifest.c) and source package (sign_source.c). */
#ifndef RS_SIGN_JOB_H
#define RS_SIGN_JOB_H

#include <openssl/sha.h>
#include <time.h>

#include "pipeline/batch.h"
#include "pipeline/pkgtree.h"
#include "pipeline/sign_template.h"
#include "pipeline/tarball.h"
#include "pipeline/template.h"

/* One file to sign. Kept small: there is one for every listed file from
 * the plan to the end. Its signature name (PKG/PATH.sig) is made when it
 * is needed, and its digest is kept in the job's digests, at the size of
 * the digest algorithm's output. */
typedef struct rs_sign_item {
    const rs_sign_package *pkg;
    const rs_sign_file *file;
    rs_pkgtree *tree;
    char *resolved;              /* name inside the package; may be file->path itself */
    const rs_format *format;     /* set once the file is checked and digested */
    rs_bytes sig;
    size_t order;                /* its place in signatures.tar.gz */
    unsigned char sig_sha256[SHA256_DIGEST_LENGTH];
} rs_sign_item;

typedef struct rs_sign_manifest rs_sign_manifest;

typedef struct rs_sign_job {
    const rs_sign_template_options *o;
    rs_template tpl;
    rs_pkgset inputs;
    rs_sign_item *items;         /* in files.json order */
    size_t n_items;
    rs_sign_item **by_name;      /* the items in signatures.tar.gz order */
    unsigned char *digests;      /* digest_len bytes for each item, in files.json order */
    size_t digest_len;
    char *tar_name;              /* the tarball's writer's current entry name */
    char *work;                  /* the hidden directory that becomes OUTDIR */
    char *sigdir;                /* work/signatures */
    char *source_tree;           /* work/<source>-<version>, when the template has one */
    time_t mtime;                /* of every file in the outputs */
    rs_tarball_feed *feed;       /* writes signatures.tar.gz */
    rs_sign_manifest *manifest;  /* written by the same thread, behind it */
    char **allowed;              /* the allowlist's fingerprints */
    size_t n_allowed;
} rs_sign_job;

/* sign_plan.c: refusals that need no file contents, then one item per
 * listed file, its package chosen, the items put in tarball order; later,
 * every path not yet read as named resolved. */
int rs_sign_check_trusted_certs(rs_sign_job *j, rs_error *err);
int rs_sign_plan_items(rs_sign_job *j, rs_error *err);
int rs_sign_plan_resolve(rs_sign_job *j, rs_error *err);
void rs_sign_plan_free(rs_sign_job *j);
/* An item's signature name, PKG/PATH.sig below signatures/, newly
 * allocated; NULL when out of memory. */
char *rs_sign_item_sig_name(const rs_sign_item *it);
/* An item's digest, as kept, and kept. */
void rs_sign_item_digest(const rs_sign_job *j, const rs_sign_item *it, rs_digest *out);
int rs_sign_item_keep_digest(rs_sign_job *j, const rs_sign_item *it, const rs_digest *d, rs_error *err);

/* sign_digest.c: open every file, check its type, digest it. */
int rs_sign_digest_as_named(rs_sign_job *j, rs_error *err);
int rs_sign_digest_all(rs_sign_job *j, rs_error *err);

/* sign_sign.c: sign every digest on the workers; on a thread of its own,
 * the signature tree, signatures.tar.gz and the manifest's entries, in
 * order, whose end finish waits for. */
int rs_sign_start_tarball(rs_sign_job *j, rs_error *err);
int rs_sign_all(rs_sign_job *j, rs_error *err);
int rs_sign_finish_tarball(rs_sign_job *j, rs_error *err);

/* sign_manifest.c: manifest.json, its entries in files.json order, each
 * written once its file is signed (by signatures.tar.gz's thread). */
int rs_sign_manifest_open(rs_sign_job *j, rs_error *err);
int rs_sign_manifest_advance(rs_sign_job *j, size_t signed_count, rs_error *err);
int rs_sign_manifest_close(rs_sign_job *j, rs_error *err);
void rs_sign_manifest_free(rs_sign_manifest *m);

/* sign_source.c: the -signed source package. */
int rs_sign_copy_source_template(rs_sign_job *j, rs_error *err);
int rs_sign_build_source_package(const rs_sign_job *j, rs_error *err);

#endif

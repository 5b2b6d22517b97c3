/* sign-template's shared state, for the files that each do one step of
 * it: plan (sign_plan.c), digest (sign_digest.c), sign (sign_sign.c),
 * manifest (sign_manifest.c) and source package (sign_source.c). */
#ifndef RS_SIGN_JOB_H
#define RS_SIGN_JOB_H

#include <openssl/evp.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "base/spill.h"
#include "pipeline/batch.h"
#include "pipeline/pkgtree.h"
#include "pipeline/sign_template.h"
#include "pipeline/tarball.h"
#include "pipeline/template.h"

/* One listed file, as kept on disk from the plan to the end, in
 * files.json order (sign_store.c). Written out whole, padding too. */
typedef struct rs_sign_record {
    uint64_t path_at;            /* its path, in the store's names */
    uint64_t resolved_at;        /* likewise its resolved name, when resolved_len */
    uint64_t order;              /* its place in signatures.tar.gz */
    uint32_t pkg;                /* its package: tpl.files.packages[pkg] */
    uint32_t path_len;
    uint32_t resolved_len;       /* 0: it resolved to its own path */
    uint8_t type;                /* rs_sig_type */
    uint8_t pad[3];
    unsigned char digest[EVP_MAX_MD_SIZE];   /* digest_len bytes, once checked */
} rs_sign_record;

/* One listed file in memory, for as long as a window or a signing slot
 * holds it: its record, and what the record points at. */
typedef struct rs_sign_item {
    rs_sign_record rec;
    size_t index;                /* in files.json order */
    const rs_sign_package *pkg;
    rs_pkgtree *tree;
    const char *path;            /* as listed; held by the window or slot */
    char *resolved;              /* name inside the package; may be path itself */
    const rs_format *format;     /* set once the file is checked and digested */
    rs_bytes sig;
    unsigned char sig_sha256[SHA256_DIGEST_LENGTH];   /* once signed */
} rs_sign_item;

/* Consecutive items, in files.json order, loaded from the store. */
typedef struct rs_sign_window {
    rs_sign_item *items;
    size_t first, n;
    rs_bytes paths;              /* the items' paths, one after the other */
} rs_sign_window;

/* How many items a window holds: the job's memory is this many items
 * whatever the number of files. A package read as a .deb is decoded once
 * per window of its files: real templates list a few images each, and
 * the heaviest workload known, a kernel flavour's image and 1,122
 * modules, fits in one window almost four times. */
#define RS_SIGN_WINDOW 4096

/* Signature hashes gathered before they are written out together. */
#define RS_SIGN_HASH_BLOCK 128

typedef struct rs_sign_manifest rs_sign_manifest;
typedef struct rs_sign_slot rs_sign_slot;
typedef struct rs_sign_slots rs_sign_slots;

typedef struct rs_sign_job {
    const rs_sign_template_options *o;
    rs_template tpl;
    rs_files_json_sink sink;     /* files.json's files, into the store */
    rs_pkgset inputs;
    rs_pkgtree **trees;          /* each package's, by its index */
    size_t *pkg_first;           /* each package's first item */
    size_t n_items;
    size_t window;               /* items a window holds: RS_SIGN_WINDOW, or fewer in tests */
    size_t first_of_type[RS_SIG_TYPES];   /* the first item of each sig_type, or n_items */
    size_t digest_len;
    /* The store: every item's record, its path, and its resolved name
     * where that differs, in temporary files (base/spill.h); resolved
     * names are appended under the lock, by the packages' threads. */
    rs_spill records, names, resolved;
    rs_bytes add_records, add_names;   /* what the sink has not yet appended */
    pthread_mutex_t store_lock;
    bool store_lock_made;
    rs_spill order;              /* the items' indices in signatures.tar.gz order */
    /* Each signature's SHA-256, in signatures.tar.gz order, for the
     * manifest: the last few in memory, the rest on disk. */
    rs_spill sig_hashes;
    unsigned char pending_hashes[RS_SIGN_HASH_BLOCK][SHA256_DIGEST_LENGTH];
    size_t hashes_on_disk;       /* a whole number of blocks */
    unsigned char read_hashes[RS_SIGN_HASH_BLOCK][SHA256_DIGEST_LENGTH];
    size_t read_hashes_first;    /* the block read back last, or SIZE_MAX */
    rs_sign_slots *slots;        /* the items being signed (sign_sign.c) */
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

/* sign_store.c: the items on disk. The sink is set before the template
 * is read; each package's files go to the store as they are read. */
int rs_sign_store_open(rs_sign_job *j, rs_error *err);
/* How many items from first the window there holds, up to end. */
size_t rs_sign_window_span(const rs_sign_job *j, size_t first, size_t end);
int rs_sign_store_flush(rs_sign_job *j, rs_error *err);
void rs_sign_store_free(rs_sign_job *j);
/* The format of an item that passed the checks: its sig_type's, which
 * the file's own had to be. */
const rs_format *rs_sign_checked_format(const rs_sign_record *rec);
/* n consecutive records from first, each checked to name a package and a
 * sig_type, and their paths into paths, NUL-terminated, one after the
 * other, each checked to be where its record says. */
int rs_sign_store_read_batch(rs_sign_job *j, size_t first, size_t n, rs_sign_record *recs, rs_bytes *paths,
                             rs_error *err);
/* The path of recs[i] in a batch so read. */
const char *rs_sign_batch_path(const rs_sign_record *recs, const rs_bytes *paths, size_t i);
int rs_sign_store_write(rs_sign_job *j, size_t index, const rs_sign_record *rec, rs_error *err);
/* The signature at place k's SHA-256, kept (in place order: k is the
 * number kept so far), and read back, for a k already kept. */
int rs_sign_store_keep_hash(rs_sign_job *j, size_t k, const unsigned char hash[SHA256_DIGEST_LENGTH], rs_error *err);
int rs_sign_store_hash(rs_sign_job *j, size_t k, unsigned char hash[SHA256_DIGEST_LENGTH], rs_error *err);
/* Item index from its record and its path (which it points at), as listed:
 * its package and tree, no format yet, its resolved name its path. */
void rs_sign_item_from_record(rs_sign_job *j, size_t index, const rs_sign_record *rec, const char *path,
                              rs_sign_item *it);
/* Item index from its record and its path, read already: both, and its
 * resolved name, into buf. */
int rs_sign_store_item_at(rs_sign_job *j, size_t index, const rs_sign_record *rec, const char *path, rs_sign_item *it,
                          rs_bytes *buf, rs_error *err);
/* Item index: its record, and its path and resolved name into buf. */
int rs_sign_store_load_item(rs_sign_job *j, size_t index, rs_sign_item *it, rs_bytes *buf, rs_error *err);
int rs_sign_window_load(rs_sign_job *j, size_t first, size_t n, rs_sign_window *w, rs_error *err);
/* The window's records written back, with any resolved name not its path. */
int rs_sign_window_save(rs_sign_job *j, rs_sign_window *w, rs_error *err);
void rs_sign_window_free(rs_sign_window *w);
/* fn for every item in files.json order, a window at a time (their
 * resolved names not loaded). */
int rs_sign_store_each(rs_sign_job *j, int (*fn)(rs_sign_job *j, rs_sign_item *it, void *ctx, rs_error *err),
                       void *ctx, rs_error *err);

/* sign_plan.c: refusals that need no file contents; each package's
 * source chosen; the items put in signatures.tar.gz order (sign_order.c). */
int rs_sign_check_trusted_certs(rs_sign_job *j, rs_error *err);
int rs_sign_plan_items(rs_sign_job *j, rs_error *err);
void rs_sign_plan_free(rs_sign_job *j);
/* An item's signature name, PKG/PATH.sig below signatures/, newly
 * allocated; NULL when out of memory. */
char *rs_sign_item_sig_name(const rs_sign_item *it);
/* An item's digest, as kept, and kept. */
void rs_sign_item_digest(const rs_sign_job *j, const rs_sign_item *it, rs_digest *out);
int rs_sign_item_keep_digest(rs_sign_job *j, rs_sign_item *it, const rs_digest *d, rs_error *err);

/* sign_order.c: the items sorted by signature name, a window at a time
 * and merged, with the refusals of two names that collide; each record's
 * order set and the order kept. */
int rs_sign_order_items(rs_sign_job *j, rs_error *err);
/* The indices of the n items from place k on, each checked to be one. */
int rs_sign_order_read(rs_sign_job *j, size_t k, size_t n, uint64_t *indices, rs_error *err);

/* sign_digest.c: every file opened, its type checked, its path
 * resolved, its digest taken; a window at a time, packages side by side. */
int rs_sign_check_all(rs_sign_job *j, rs_error *err);
/* Every path of the window resolved inside its package, but for one
 * read as named where that is its resolution. */
int rs_sign_resolve_window(rs_sign_window *w, rs_error *err);

/* sign_sign.c: sign every digest on the workers; on a thread of its own,
 * the signature tree, signatures.tar.gz and the manifest's entries, in
 * order, whose end finish waits for. */
int rs_sign_start_tarball(rs_sign_job *j, rs_error *err);
int rs_sign_all(rs_sign_job *j, rs_error *err);
int rs_sign_finish_tarball(rs_sign_job *j, rs_error *err);
void rs_sign_slots_free(rs_sign_job *j);

/* sign_manifest.c: manifest.json, its entries in files.json order, each
 * written once its file is signed (by signatures.tar.gz's thread). */
int rs_sign_manifest_open(rs_sign_job *j, rs_error *err);
int rs_sign_manifest_advance(rs_sign_job *j, size_t signed_count, rs_error *err);
int rs_sign_manifest_close(rs_sign_job *j, rs_error *err);
void rs_sign_manifest_free(rs_sign_manifest *m);

/* sign_source.c: the -signed source package. */
int rs_sign_copy_source_template(rs_sign_job *j, rs_error *err);
int rs_sign_build_source_package(rs_sign_job *j, rs_error *err);

#endif

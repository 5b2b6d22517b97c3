/* attach-tree's shared state, for its two files: the tree's walk, its
 * batches and the commit (attach_tree.c); each file's check and write
 * (attach_tree_file.c). */
#ifndef RS_ATTACH_TREE_INTERNAL_H
#define RS_ATTACH_TREE_INTERNAL_H

#include <stdbool.h>
#include <sys/stat.h>

#include "base/file.h"
#include "base/strpool.h"
#include "pipeline/attach_tree.h"

#define ENTRY_BLOCK 4096

/* A file as it was checked, to write the same one: ctime cannot be set
 * back, so a file written since its check differs from it here even when
 * its size and mtime were restored. */
typedef struct file_id {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
} file_id;

/* Kept for every file from its check to its rename, so it holds no
 * signature: each is read again to be written, and must hash the same. */
typedef struct entry {
    char *rel;            /* <path>, relative to root; in the job's pool */
    char *write_path;     /* in place: the file itself, through any symlinks */
    unsigned char sig_sha256[32];
    char *problem;        /* why it does not fit, or NULL */
    bool carried;         /* the file already carries this very signature */
    rs_output_kept out;   /* sealed temporary of its write path, renamed at the end */
    file_id checked;
} entry;

typedef struct tree_job {
    const rs_attach_tree_options *o;
    int root_fd;          /* targets are opened beneath it: none may lead out of the root */
    bool in_place;        /* new bytes are renamed over the files themselves */
    volatile bool needs_cert;   /* a signature carries no certificate, and none was given */
    entry **blocks;       /* ENTRY_BLOCK entries each: no copy, no half-empty doubling */
    size_t n_blocks, count;
    rs_strpool names;
} tree_job;

static inline entry *entry_at(const tree_job *t, size_t i)
{
    return &t->blocks[i / ENTRY_BLOCK][i % ENTRY_BLOCK];
}

/* Where the signed file goes: in place, the file itself; else
 * <output>/<path><suffix>. */
char *rs_attach_write_path(const tree_job *t, const entry *e);
/* Batch steps (pipeline/batch.h) over the entries: check one signature
 * against its file; write the file with it, kept for the commit. */
int rs_attach_check_one(void *ctx, size_t i, rs_error *err);
int rs_attach_write_one(void *ctx, size_t i, rs_error *err);

#endif

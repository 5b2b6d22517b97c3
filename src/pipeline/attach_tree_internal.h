/* attach-tree's shared state, for its files: the passes and the commit
 * (attach_tree.c); the journal that carries every entry from one pass to
 * the next (attach_tree_journal.c); two names of one file
 * (attach_tree_same.c); each file's check and write (attach_tree_file.c). */
#ifndef RS_ATTACH_TREE_INTERNAL_H
#define RS_ATTACH_TREE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "base/bytes.h"
#include "base/file.h"
#include "base/spill.h"
#include "pipeline/attach_tree.h"

/* Entries held in memory at once: enough to keep every core busy and to
 * read the journal in large pieces, few enough that memory stays small
 * and the same at any number of files. */
#define WINDOW 1024

/* A file as it was checked, to write the same one: ctime cannot be set
 * back, so a file written since its check differs from it here even when
 * its size and mtime were restored. */
typedef struct file_id {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
} file_id;

/* What is kept of an entry from one pass to the next, in the journal: no
 * signature (each is read again to be written, and must hash the same). */
typedef struct entry_kept {
    uint64_t rel_at, write_path_at;   /* in the journal's names */
    uint32_t rel_len, write_path_len; /* write_path_len 0: none */
    uint32_t made_dir_len;            /* the write path's prefix naming the first directory made for it, or 0 */
    unsigned char sig_sha256[32];
    bool carried;         /* the file already carries this very signature */
    bool failed;          /* it does not fit; its problem is in the job's list */
    bool maybe_shared;    /* in place, its file may have another name in the tree */
    rs_output_kept out;   /* sealed temporary of its write path, renamed at the end */
    file_id checked;
} entry_kept;

typedef struct entry {
    entry_kept k;
    char *rel;            /* <path>, relative to root; in the window's names */
    char *write_path;     /* in place: the file itself, through any symlinks */
    char *problem;        /* why it does not fit, or NULL: set by the check */
} entry;

typedef struct problem {
    size_t index;
    char *msg;
} problem;

typedef struct tree_job {
    const rs_attach_tree_options *o;
    int root_fd;          /* targets are opened beneath it: none may lead out of the root */
    bool in_place;        /* new bytes are renamed over the files themselves */
    char *real_root;      /* in place: the root with its symlinks resolved */
    uint64_t root_mount;  /* in place: its mount's id, 0 when unknown */
    volatile bool needs_cert;   /* a signature carries no certificate, and none was given */
    size_t count;         /* entries in the journal */
    rs_spill kept, names; /* the journal: one entry_kept each; their paths */
    bool written;         /* temporaries may be kept: a failure must remove them */
    /* The window: entries [first, first + n), their paths in memory. */
    entry *win;
    entry_kept *win_kept;
    size_t first, n;
    rs_bytes win_names, win_write_paths;
    problem *problems;
    size_t n_problems;
    /* In place, the files that may have a second name: (dev, ino) pairs. */
    file_id *shared;
    size_t n_shared, cap_shared;
    void *step_ctx;       /* for a pass's window step */
} tree_job;

/* Where the signed file goes: in place, the file itself; else
 * <output>/<path><suffix>. */
char *rs_attach_write_path(const tree_job *t, const entry *e);
/* Batch steps (pipeline/batch.h) over the window: check one signature
 * against its file; write the file with it, kept for the commit. */
int rs_attach_check_one(void *ctx, size_t i, rs_error *err);
int rs_attach_write_one(void *ctx, size_t i, rs_error *err);
/* The id of the mount fd was reached through; 0 when the kernel cannot tell. */
uint64_t rs_attach_mount_id(int fd);

/* attach_tree_journal.c */
int rs_attach_journal_open(tree_job *t, rs_error *err);
void rs_attach_journal_free(tree_job *t);
/* During the walk: one more entry; then the last of them written out. */
int rs_attach_journal_add(tree_job *t, const char *rel, rs_error *err);
int rs_attach_journal_end_walk(tree_job *t, rs_error *err);
/* Runs step on every window of entries in order, each loaded with its
 * paths and, if store, written back after the step (also when it fails). */
typedef int (*rs_attach_window_step)(tree_job *t, rs_error *err);
int rs_attach_each_window(tree_job *t, rs_attach_window_step step, bool store, rs_error *err);
/* After the check of a window: the write paths it found (malloc'd)
 * appended to the journal if keep, and freed. */
int rs_attach_journal_keep_write_paths(tree_job *t, bool keep, rs_error *err);
int rs_attach_add_problem(tree_job *t, size_t index, char *msg, rs_error *err);

/* attach_tree_same.c: in place, a file that may have a second name in the
 * tree noted during the check; after it, two names of one file refused. */
int rs_attach_add_shared(tree_job *t, const file_id *id, rs_error *err);
int rs_attach_note_same_files(tree_job *t, rs_error *err);

#endif

/* The second stage (attach_tree.h): the signatures directory walked into
 * one entry per signature, every entry checked before any file is written,
 * every file written before any is renamed into place. */
#include "pipeline/attach_tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/walk.h"
#include "pipeline/attach_tree_internal.h"
#include "pipeline/batch.h"

/* Every NAME.sig below the signatures directory; a link or a special file
 * is refused: skipped, it would leave its file unsigned without a word. */
static int collect(void *ctx, const char *rel, const char *path, const struct stat *st, rs_error *err)
{
    if (S_ISDIR(st->st_mode) || !rs_name_has_suffix(rel, ".sig"))
        return 0;
    return S_ISREG(st->st_mode) ? rs_attach_journal_add(ctx, rel, err) : rs_fail(err, "%s: not a regular file", path);
}

/* In place: no OUTROOT, or ROOT itself given as OUTROOT. */
static bool writes_in_place(const tree_job *t)
{
    struct stat root, out;

    if (t->o->suffix)
        return false;
    if (!t->o->output)
        return true;
    return fstat(t->root_fd, &root) == 0 && stat(t->o->output, &out) == 0 && root.st_dev == out.st_dev &&
           root.st_ino == out.st_ino;
}

/* In place, what tells whether a file may have a second name in the tree
 * (attach_tree_same.c): the root's real path, and its mount. */
static int note_root(tree_job *t, rs_error *err)
{
    if (!(t->real_root = realpath(t->o->root, NULL)))
        return rs_fail(err, "%s: %s", t->o->root, strerror(errno));
    t->root_mount = rs_attach_mount_id(t->root_fd);
    return 0;
}

/* A failure once files are written: every temporary kept is removed. */
static int abort_window(tree_job *t, rs_error *err)
{
    (void)err;
    for (size_t i = 0; i < t->n; i++) {
        entry *e = &t->win[i];
        _cleanup_free_ char *path = e->k.out.suffix[0] ? rs_attach_write_path(t, e) : NULL;

        if (path)
            rs_output_abort_kept(path, &e->k.out);
    }
    return 0;
}

/* Then the directories made for the files: those that are empty now. */
static int remove_made_dirs(tree_job *t, rs_error *err)
{
    (void)err;
    for (size_t i = 0; i < t->n; i++) {
        entry *e = &t->win[i];
        _cleanup_free_ char *path = e->k.made_dir_len ? rs_attach_write_path(t, e) : NULL;

        if (path && e->k.made_dir_len < strlen(path)) {
            path[e->k.made_dir_len] = '\0';
            rs_remove_empty_dirs(path);
        }
    }
    return 0;
}

static void job_free(tree_job *t, int rc)
{
    rs_error ignored;

    if (rc < 0 && t->written) {
        rs_attach_each_window(t, abort_window, false, &ignored);
        rs_attach_each_window(t, remove_made_dirs, false, &ignored);
    }
    rs_attach_journal_free(t);
    free(t->real_root);
}

/* None to commit for a file that already carried its signature. */
static int commit(const tree_job *t, entry *e, rs_error *err)
{
    _cleanup_free_ char *path = NULL;

    if (!e->k.out.suffix[0])
        return 0;
    if (!(path = rs_attach_write_path(t, e)))
        return rs_fail(err, "out of memory");
    return rs_output_commit_kept(path, &e->k.out, err);
}

static int commit_window(tree_job *t, rs_error *err)
{
    for (size_t i = 0; i < t->n; i++)
        if (commit(t, &t->win[i], err) < 0)
            return -1;
    return 0;
}

/* Every signature checked against its file, a window at a time. What a
 * later pass needs is kept in the journal: a problem in the job's list;
 * in place, the path to write, and a file that may have a second name. */
static int check_window(tree_job *t, rs_error *err)
{
    int rc = rs_batch_run(t->n, t->o->jobs, rs_attach_check_one, t, err);

    for (size_t i = 0; i < t->n; i++) {
        entry *e = &t->win[i];

        e->k.failed = e->problem != NULL;
        if (rc == 0 && e->problem)
            rc = rs_attach_add_problem(t, t->first + i, TAKE_PTR(e->problem), err);
        free(e->problem);
        if (rc == 0 && t->in_place && !e->k.failed && !e->k.carried && e->k.maybe_shared)
            rc = rs_attach_add_shared(t, &e->k.checked, err);
    }
    return rs_attach_journal_keep_write_paths(t, rc == 0, err) < 0 ? -1 : rc;
}

static int write_window(tree_job *t, rs_error *err)
{
    return rs_batch_run(t->n, t->o->jobs, rs_attach_write_one, t, err);
}

static int cmp_problem(const void *a, const void *b)
{
    const problem *x = a, *y = b;

    return x->index < y->index ? -1 : x->index > y->index;
}

/* In the order of the entries, as the tree was walked. */
static int take_problems(tree_job *t, rs_attach_tree_report *r, rs_error *err)
{
    if (!t->n_problems)
        return 0;
    if (!(r->problems = calloc(t->n_problems, sizeof(char *))))
        return rs_fail(err, "out of memory");
    qsort(t->problems, t->n_problems, sizeof(*t->problems), cmp_problem);
    for (size_t i = 0; i < t->n_problems; i++)
        r->problems[i] = TAKE_PTR(t->problems[i].msg);
    r->n_problems = t->n_problems;
    return rs_fail(err, "%s: %zu of %zu signatures do not fit their files; nothing was written", t->o->signatures,
                   r->n_problems, t->count);
}

/* The walk, into the journal. */
static int find_signatures(tree_job *t, rs_error *err)
{
    int rc = rs_attach_journal_open(t, err);

    if (rc == 0 && t->in_place)
        rc = note_root(t, err);
    if (rc == 0)
        rc = rs_walk_tree(t->o->signatures, &(rs_walk_opts){ .skip_hidden = true }, collect, t, err);
    if (rc == 0)
        rc = rs_attach_journal_end_walk(t, err);
    if (rc == 0 && t->count == 0)
        rc = rs_fail(err, "%s: no .sig files", t->o->signatures);
    return rc;
}

/* Every entry checked before any file is written. */
static int check_all(tree_job *t, rs_attach_tree_report *report, rs_error *err)
{
    int rc;

    report->n_files = t->count;
    rs_progress_total(t->o->progress, t->count);
    rc = rs_attach_each_window(t, check_window, true, err);
    report->needs_cert = t->needs_cert;
    if (rc == 0 && t->in_place)
        rc = rs_attach_note_same_files(t, err);
    if (rc == 0)
        rc = take_problems(t, report, err);
    if (rc == 0 && t->o->checked)
        t->o->checked(t->o->checked_ctx);
    return rc;
}

/* Every file written before any is renamed into place. */
static int write_all(tree_job *t, rs_error *err)
{
    t->written = true;
    if (rs_attach_each_window(t, write_window, true, err) < 0)
        return -1;
    /* Everything is written; one sync, and only renames remain. */
    if (rs_sync_filesystem(t->o->output ? t->o->output : t->o->root, err) < 0)
        return -1;
    return rs_attach_each_window(t, commit_window, true, err);
}

int rs_attach_tree(const rs_attach_tree_options *o, rs_attach_tree_report *report, rs_error *err)
{
    tree_job t = { .o = o, .root_fd = -1, .kept = RS_SPILL_INIT, .names = RS_SPILL_INIT };
    int rc;

    memset(report, 0, sizeof(*report));
    if ((t.root_fd = open(o->root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        return rs_fail(err, "%s: %s", o->root, strerror(errno));
    t.in_place = writes_in_place(&t);
    rc = find_signatures(&t, err);
    if (rc == 0)
        rc = check_all(&t, report, err);
    if (rc == 0)
        rc = write_all(&t, err);
    job_free(&t, rc);
    close(t.root_fd);
    return rc;
}

void rs_attach_tree_report_free(rs_attach_tree_report *r)
{
    for (size_t i = 0; i < r->n_problems; i++)
        free(r->problems[i]);
    free(r->problems);
    memset(r, 0, sizeof(*r));
}

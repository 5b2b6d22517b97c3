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

static int add_entry(tree_job *t, const char *rel, rs_error *err)
{
    entry *e;

    if (t->count == t->n_blocks * ENTRY_BLOCK) {
        entry **grown = realloc(t->blocks, (t->n_blocks + 1) * sizeof(*grown));

        if (!grown)
            return rs_fail(err, "out of memory");
        t->blocks = grown;
        if (!(t->blocks[t->n_blocks] = malloc(ENTRY_BLOCK * sizeof(entry))))
            return rs_fail(err, "out of memory");
        t->n_blocks++;
    }
    e = entry_at(t, t->count);
    memset(e, 0, sizeof(*e));
    if (!(e->rel = rs_strpool_dup(&t->names, rel)))
        return rs_fail(err, "out of memory");
    e->rel[strlen(rel) - 4] = '\0';   /* drop ".sig" */
    t->count++;
    return 0;
}

/* Every NAME.sig below the signatures directory; a link or a special file
 * is refused: skipped, it would leave its file unsigned without a word. */
static int collect(void *ctx, const char *rel, const char *path, const struct stat *st, rs_error *err)
{
    if (S_ISDIR(st->st_mode) || !rs_name_has_suffix(rel, ".sig"))
        return 0;
    return S_ISREG(st->st_mode) ? add_entry(ctx, rel, err) : rs_fail(err, "%s: not a regular file", path);
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

static int cmp_file(const void *a, const void *b)
{
    const entry *x = *(entry *const *)a, *y = *(entry *const *)b;

    if (x->checked.dev != y->checked.dev)
        return x->checked.dev < y->checked.dev ? -1 : 1;
    if (x->checked.ino != y->checked.ino)
        return x->checked.ino < y->checked.ino ? -1 : 1;
    return strcmp(x->rel, y->rel);
}

/* In place, two names of one file (a symlink and its target, or hard
 * links) would each rename a signed copy over it, and the last would
 * drop the other's signature: the second is reported, naming the first. */
static int note_same_files(tree_job *t, rs_error *err)
{
    _cleanup_free_ entry **by_file = calloc(t->count ? t->count : 1, sizeof(*by_file));
    size_t n = 0;

    if (!by_file)
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < t->count; i++)
        if (!entry_at(t, i)->problem && !entry_at(t, i)->carried)
            by_file[n++] = entry_at(t, i);
    qsort(by_file, n, sizeof(*by_file), cmp_file);
    for (size_t i = 1; i < n; i++) {
        entry *a = by_file[i - 1], *b = by_file[i];

        if (a->checked.dev != b->checked.dev || a->checked.ino != b->checked.ino)
            continue;
        if (asprintf(&b->problem, "%s/%s: the same file as %s/%s; in place, only one signature can be attached to it",
                     t->o->root, b->rel, t->o->root, a->rel) < 0) {
            b->problem = NULL;
            return rs_fail(err, "out of memory");
        }
    }
    return 0;
}

static void job_free(tree_job *t)
{
    for (size_t i = 0; i < t->count; i++) {
        entry *e = entry_at(t, i);

        if (e->out.suffix[0]) {
            _cleanup_free_ char *path = rs_attach_write_path(t, e);

            if (path)
                rs_output_abort_kept(path, &e->out);
        }
        free(e->write_path);
        free(e->problem);
    }
    for (size_t b = 0; b < t->n_blocks; b++)
        free(t->blocks[b]);
    free(t->blocks);
    rs_strpool_free(&t->names);
}

/* None to commit for a file that already carried its signature. */
static int commit(const tree_job *t, entry *e, rs_error *err)
{
    _cleanup_free_ char *path = NULL;

    if (!e->out.suffix[0])
        return 0;
    if (!(path = rs_attach_write_path(t, e)))
        return rs_fail(err, "out of memory");
    return rs_output_commit_kept(path, &e->out, err);
}

static int take_problems(tree_job *t, rs_attach_tree_report *r, rs_error *err)
{
    for (size_t i = 0; i < t->count; i++)
        if (entry_at(t, i)->problem)
            r->n_problems++;
    if (!r->n_problems)
        return 0;
    r->problems = calloc(r->n_problems, sizeof(char *));
    if (!r->problems)
        return rs_fail(err, "out of memory");
    for (size_t i = 0, k = 0; i < t->count; i++)
        if (entry_at(t, i)->problem)
            r->problems[k++] = TAKE_PTR(entry_at(t, i)->problem);
    return rs_fail(err, "%s: %zu of %zu signatures do not fit their files; nothing was written", t->o->signatures,
                   r->n_problems, t->count);
}

int rs_attach_tree(const rs_attach_tree_options *o, rs_attach_tree_report *report, rs_error *err)
{
    tree_job t = { .o = o, .root_fd = -1 };
    int rc;

    memset(report, 0, sizeof(*report));
    if ((t.root_fd = open(o->root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        return rs_fail(err, "%s: %s", o->root, strerror(errno));
    t.in_place = writes_in_place(&t);
    rc = rs_walk_tree(o->signatures, &(rs_walk_opts){ .skip_hidden = true }, collect, &t, err);
    if (rc == 0 && t.count == 0)
        rc = rs_fail(err, "%s: no .sig files", o->signatures);
    report->n_files = t.count;
    rs_progress_total(o->progress, t.count);
    if (rc == 0) {
        rc = rs_batch_run(t.count, o->jobs, rs_attach_check_one, &t, err);
        report->needs_cert = t.needs_cert;
    }
    if (rc == 0 && t.in_place)
        rc = note_same_files(&t, err);
    if (rc == 0)
        rc = take_problems(&t, report, err);
    if (rc == 0 && o->checked)
        o->checked(o->checked_ctx);
    if (rc == 0)
        rc = rs_batch_run(t.count, o->jobs, rs_attach_write_one, &t, err);
    /* Everything is written; one sync, and only renames remain. */
    if (rc == 0)
        rc = rs_sync_filesystem(o->output ? o->output : o->root, err);
    for (size_t i = 0; rc == 0 && i < t.count; i++)
        rc = commit(&t, entry_at(&t, i), err);
    job_free(&t);
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

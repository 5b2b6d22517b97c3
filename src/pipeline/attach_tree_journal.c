/* attach-tree's journal: every entry, from the walk that finds it to the
 * rename that ends it, kept in two temporary files (base/spill.h) instead
 * of memory: its record (entry_kept), and its paths. The passes read it
 * back one window of entries at a time, so attach-tree's memory is the
 * same at a thousand files as at a million. */
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "pipeline/attach_tree_internal.h"

int rs_attach_journal_open(tree_job *t, rs_error *err)
{
    if (!(t->win = calloc(WINDOW, sizeof(*t->win))) || !(t->win_kept = calloc(WINDOW, sizeof(*t->win_kept))))
        return rs_fail(err, "out of memory");
    return rs_spill_open(&t->kept, err) < 0 || rs_spill_open(&t->names, err) < 0 ? -1 : 0;
}

void rs_attach_journal_free(tree_job *t)
{
    for (size_t i = 0; i < t->n_problems; i++)
        free(t->problems[i].msg);
    free(t->problems);
    free(t->shared);
    free(t->win);
    free(t->win_kept);
    rs_bytes_free(&t->win_names);
    rs_bytes_free(&t->win_write_paths);
    rs_spill_close(&t->kept);
    rs_spill_close(&t->names);
}

/* The window's strings, one after the other, appended to the names; each
 * record's offset is moved from the buffer to the journal. */
static int append_strings(tree_job *t, rs_bytes *buf, bool write_paths, rs_error *err)
{
    uint64_t base;

    if (!buf->len)
        return 0;
    if (rs_spill_append(&t->names, buf->data, buf->len, &base, err) < 0)
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        if (!write_paths)
            t->win_kept[i].rel_at += base;
        else if (t->win[i].k.write_path_len)
            t->win[i].k.write_path_at += base;
    }
    buf->len = 0;
    return 0;
}

static int end_walk_window(tree_job *t, rs_error *err)
{
    if (!t->n)
        return 0;
    if (append_strings(t, &t->win_names, false, err) < 0 ||
        rs_spill_append(&t->kept, t->win_kept, t->n * sizeof(*t->win_kept), NULL, err) < 0)
        return -1;
    t->count += t->n;
    t->n = 0;
    return 0;
}

int rs_attach_journal_add(tree_job *t, const char *rel, rs_error *err)
{
    size_t len = strlen(rel) - 4;   /* without ".sig" */
    entry_kept *k = &t->win_kept[t->n];

    if (len > UINT32_MAX)
        return rs_fail(err, "%s: name too long", rel);
    /* Zeroed whole, padding too: the record is written out as it is. */
    memset(k, 0, sizeof(*k));
    k->rel_at = t->win_names.len;
    k->rel_len = (uint32_t)len;
    if (rs_bytes_append(&t->win_names, rel, len, err) < 0 || rs_bytes_append(&t->win_names, "", 1, err) < 0)
        return -1;
    return ++t->n == WINDOW ? end_walk_window(t, err) : 0;
}

int rs_attach_journal_end_walk(tree_job *t, rs_error *err)
{
    return end_walk_window(t, err);
}

/* Points *s at a string of len bytes at at, inside the span buf read
 * from start; the journal is ours, but a short or corrupt one is refused
 * rather than read past. */
static int point_at(const rs_bytes *buf, uint64_t start, uint64_t at, uint32_t len, char **s, rs_error *err)
{
    if (at < start || at - start >= buf->len || len >= buf->len - (at - start) || buf->data[at - start + len])
        return rs_fail(err, "temporary file: an entry's name is not where it was written");
    *s = (char *)buf->data + (at - start);
    return 0;
}

/* The strings of the window's entries lie one after the other: one read. */
static int load_strings(tree_job *t, rs_bytes *buf, bool write_paths, rs_error *err)
{
    uint64_t start = 0, end = 0;
    bool any = false;

    for (size_t i = 0; i < t->n; i++) {
        const entry_kept *k = &t->win[i].k;
        uint64_t at = write_paths ? k->write_path_at : k->rel_at;
        uint32_t len = write_paths ? k->write_path_len : k->rel_len;

        if (write_paths && !len)
            continue;
        if (!any || at < start)
            start = at;
        if (!any || at + len + 1 > end)
            end = at + len + 1;
        any = true;
    }
    if (!any)
        return 0;
    if (end - start > SIZE_MAX / 2)
        return rs_fail(err, "temporary file: names too long");
    if (buf->cap < end - start) {
        uint8_t *grown = realloc(buf->data, end - start);

        if (!grown)
            return rs_fail(err, "out of memory");
        buf->data = grown;
        buf->cap = end - start;
    }
    buf->len = end - start;
    if (rs_spill_read(&t->names, start, buf->data, buf->len, err) < 0)
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        entry *e = &t->win[i];

        if (write_paths && !e->k.write_path_len)
            continue;
        if (point_at(buf, start, write_paths ? e->k.write_path_at : e->k.rel_at,
                     write_paths ? e->k.write_path_len : e->k.rel_len, write_paths ? &e->write_path : &e->rel, err) < 0)
            return -1;
    }
    return 0;
}

static int load_window(tree_job *t, rs_error *err)
{
    t->n = t->count - t->first < WINDOW ? t->count - t->first : WINDOW;
    if (rs_spill_read(&t->kept, t->first * sizeof(entry_kept), t->win_kept, t->n * sizeof(entry_kept), err) < 0)
        return -1;
    for (size_t i = 0; i < t->n; i++)
        t->win[i] = (entry){ .k = t->win_kept[i] };
    if (load_strings(t, &t->win_names, false, err) < 0)
        return -1;
    return load_strings(t, &t->win_write_paths, true, err);
}

static int store_window(tree_job *t, rs_error *err)
{
    for (size_t i = 0; i < t->n; i++)
        t->win_kept[i] = t->win[i].k;
    return rs_spill_write(&t->kept, t->first * sizeof(entry_kept), t->win_kept, t->n * sizeof(entry_kept), err);
}

int rs_attach_each_window(tree_job *t, rs_attach_window_step step, bool store, rs_error *err)
{
    for (t->first = 0; t->first < t->count; t->first += t->n) {
        rs_error ignored;
        int rc;

        if (load_window(t, err) < 0)
            return -1;
        rc = step(t, err);
        /* What the step did is kept even when it failed: the files it
         * wrote must be found again, to be removed. */
        if (store && store_window(t, rc == 0 ? err : &ignored) < 0)
            rc = -1;
        if (rc < 0)
            return -1;
    }
    t->n = 0;
    return 0;
}

int rs_attach_journal_keep_write_paths(tree_job *t, bool keep, rs_error *err)
{
    int rc = 0;

    t->win_write_paths.len = 0;
    for (size_t i = 0; i < t->n; i++) {
        entry *e = &t->win[i];

        if (rc == 0 && keep && e->write_path) {
            size_t len = strlen(e->write_path);

            e->k.write_path_at = t->win_write_paths.len;
            e->k.write_path_len = (uint32_t)len;
            if (len > UINT32_MAX)
                rc = rs_fail(err, "%s: path too long", e->write_path);
            else
                rc = rs_bytes_append(&t->win_write_paths, e->write_path, len + 1, err);
        }
        free(e->write_path);
        e->write_path = NULL;
    }
    if (rc == 0 && keep)
        rc = append_strings(t, &t->win_write_paths, true, err);
    return rc;
}

int rs_attach_add_problem(tree_job *t, size_t index, char *msg, rs_error *err)
{
    problem *grown;

    if (!msg || !(grown = realloc(t->problems, (t->n_problems + 1) * sizeof(*grown)))) {
        free(msg);
        return rs_fail(err, "out of memory");
    }
    t->problems = grown;
    t->problems[t->n_problems++] = (problem){ index, msg };
    return 0;
}

/* signatures.tar.gz's order: every PKG/PATH.sig sorted as the tarball
 * sorts its paths (rs_tarball_path_cmp). The items are sorted a window at
 * a time, each sorted run kept on disk, and the runs merged; so the sort
 * holds one window, or one item for each run, whatever the number of
 * files. Two names that collide are next to each other in that order,
 * where they are refused. */
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "pipeline/sign_job.h"

/* PKG/PATH.sig in rs_tarball_path_cmp's order. A package name holds no
 * '/', so two names of one package compare as their PATH.sig, and names
 * of two packages as the packages' names (where one name ends, its '/'
 * ranks below any byte of the other). */
static int cmp_sig_name(const rs_sign_item *x, const rs_sign_item *y)
{
    int c = x->pkg == y->pkg ? 0 : rs_tarball_path_cmp(x->pkg->name, y->pkg->name);

    return c ? c : rs_tarball_suffixed_cmp(x->path, y->path, ".sig");
}

static int cmp_item_ptrs(const void *a, const void *b)
{
    return cmp_sig_name(*(rs_sign_item *const *)a, *(rs_sign_item *const *)b);
}

/* Whether b's PATH lies below a's PATH.sig. */
static bool below_sig_of(const rs_sign_item *a, const rs_sign_item *b)
{
    size_t n = strlen(a->path);

    return a->pkg == b->pkg && !strncmp(a->path, b->path, n) && !strncmp(b->path + n, ".sig/", 5);
}

/* Places the items one after the other, each checked against the one
 * before it, their indices appended to the job's order. */
typedef struct placer {
    rs_sign_job *j;
    size_t k;                  /* the next place */
    rs_sign_item prev;         /* the item at place k - 1, its path in prev_path */
    rs_bytes prev_path;
    rs_bytes pending;          /* indices not yet appended */
} placer;

static void placer_free(placer *p)
{
    rs_bytes_free(&p->prev_path);
    rs_bytes_free(&p->pending);
}

static int flush_pending(placer *p, rs_error *err)
{
    int rc = rs_spill_append(&p->j->order, p->pending.data, p->pending.len, NULL, err);

    p->pending.len = 0;
    return rc;
}

static int place(placer *p, rs_sign_item *it, rs_error *err)
{
    uint64_t index = it->index;
    const rs_sign_item *a = &p->prev;

    if (p->k > 0 && cmp_sig_name(a, it) == 0)
        return rs_fail(err, "package %s: %s is listed twice", a->pkg->name, a->path);
    if (p->k > 0 && below_sig_of(a, it))
        return rs_fail(err, "package %s: %s.sig would be both the signature of %s and a directory above %s's",
                       a->pkg->name, a->path, a->path, it->path);
    it->rec.order = p->k++;
    if (rs_bytes_set(&p->prev_path, it->path, strlen(it->path) + 1, err) < 0 ||
        rs_bytes_append(&p->pending, &index, sizeof(index), err) < 0)
        return -1;
    p->prev = (rs_sign_item){ .pkg = it->pkg, .path = (const char *)p->prev_path.data };
    return p->pending.len >= 4096 ? flush_pending(p, err) : 0;
}

/* One window's items, sorted. */
static int sort_window(rs_sign_window *w, rs_sign_item ***sorted, rs_error *err)
{
    if (!(*sorted = calloc(w->n, sizeof(**sorted))))
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < w->n; i++)
        (*sorted)[i] = &w->items[i];
    qsort(*sorted, w->n, sizeof(**sorted), cmp_item_ptrs);
    return 0;
}

/* Every item fits one window: sorted, placed, and the records written back. */
static int order_one_window(rs_sign_job *j, placer *p, rs_error *err)
{
    _cleanup_(rs_sign_window_free) rs_sign_window w = { 0 };
    _cleanup_free_ rs_sign_item **sorted = NULL;

    if (rs_sign_window_load(j, 0, j->n_items, &w, err) < 0 || sort_window(&w, &sorted, err) < 0)
        return -1;
    for (size_t i = 0; i < w.n; i++)
        if (place(p, sorted[i], err) < 0)
            return -1;
    return rs_sign_window_save(j, &w, err);
}

/* One sorted run of indices on disk, read back an item at a time. */
typedef struct run {
    uint64_t at, end;          /* in the runs' file */
    rs_sign_item it;           /* the run's next item */
    rs_bytes names;
} run;

static int run_next(rs_sign_job *j, const rs_spill *runs, run *r, rs_error *err)
{
    uint64_t index;

    if (rs_spill_read(runs, r->at, &index, sizeof(index), err) < 0)
        return -1;
    if (index >= j->n_items)
        return rs_fail(err, "temporary file: an index that was not written");
    r->at += sizeof(index);
    return rs_sign_store_load_item(j, (size_t)index, &r->it, &r->names, err);
}

/* A heap of the runs not yet ended, the one whose item comes first on top. */
static bool run_before(const run *a, const run *b)
{
    return cmp_sig_name(&a->it, &b->it) < 0;
}

static void sift_down(run **heap, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        run *t;

        if (l < n && run_before(heap[l], heap[m]))
            m = l;
        if (r < n && run_before(heap[r], heap[m]))
            m = r;
        if (m == i)
            return;
        t = heap[i], heap[i] = heap[m], heap[m] = t;
        i = m;
    }
}

static int merge_runs(rs_sign_job *j, placer *p, const rs_spill *runs, run *rv, size_t n_runs, rs_error *err)
{
    _cleanup_free_ run **heap = calloc(n_runs, sizeof(*heap));
    size_t n = 0;

    if (!heap)
        return rs_fail(err, "out of memory");
    for (size_t r = 0; r < n_runs; r++) {
        if (run_next(j, runs, &rv[r], err) < 0)
            return -1;
        heap[n++] = &rv[r];
    }
    for (size_t i = n / 2; i-- > 0;)
        sift_down(heap, n, i);
    while (n) {
        run *top = heap[0];

        if (place(p, &top->it, err) < 0 || rs_sign_store_write(j, top->it.index, &top->it.rec, err) < 0)
            return -1;
        if (top->at == top->end)
            heap[0] = heap[--n];
        else if (run_next(j, runs, top, err) < 0)
            return -1;
        sift_down(heap, n, 0);
    }
    return 0;
}

static int append_run(rs_spill *runs, rs_sign_item *const *sorted, size_t n, rs_error *err)
{
    _cleanup_free_ uint64_t *indices = calloc(n, sizeof(*indices));

    if (!indices)
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < n; i++)
        indices[i] = sorted[i]->index;
    return rs_spill_append(runs, indices, n * sizeof(*indices), NULL, err);
}

/* Each window sorted into a run of indices on disk, then the runs merged. */
static int order_by_runs(rs_sign_job *j, placer *p, rs_error *err)
{
    size_t n_runs = (j->n_items + j->window - 1) / j->window;
    _cleanup_free_ run *rv = calloc(n_runs, sizeof(*rv));
    rs_spill runs = RS_SPILL_INIT;
    int rc = rv ? rs_spill_open(&runs, err) : rs_fail(err, "out of memory");

    for (size_t r = 0; rc == 0 && r < n_runs; r++) {
        _cleanup_(rs_sign_window_free) rs_sign_window w = { 0 };
        _cleanup_free_ rs_sign_item **sorted = NULL;
        size_t first = r * j->window;

        rc = rs_sign_window_load(j, first, rs_sign_window_span(j, first, j->n_items), &w, err);
        if (rc == 0)
            rc = sort_window(&w, &sorted, err);
        rv[r].at = runs.size;
        if (rc == 0)
            rc = append_run(&runs, sorted, w.n, err);
        rv[r].end = runs.size;
    }
    if (rc == 0)
        rc = merge_runs(j, p, &runs, rv, n_runs, err);
    for (size_t r = 0; rv && r < n_runs; r++)
        rs_bytes_free(&rv[r].names);
    rs_spill_close(&runs);
    return rc;
}

int rs_sign_order_items(rs_sign_job *j, rs_error *err)
{
    placer p = { .j = j };
    int rc = j->n_items <= j->window ? order_one_window(j, &p, err) : order_by_runs(j, &p, err);

    if (rc == 0)
        rc = flush_pending(&p, err);
    placer_free(&p);
    return rc;
}

int rs_sign_order_read(rs_sign_job *j, size_t k, size_t n, uint64_t *indices, rs_error *err)
{
    if (rs_spill_read(&j->order, (uint64_t)k * sizeof(*indices), indices, n * sizeof(*indices), err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (indices[i] >= j->n_items)
            return rs_fail(err, "temporary file: an index that was not written");
    return 0;
}

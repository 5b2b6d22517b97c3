/* In place, two names of one file (a symlink and its target, hard links,
 * a bind mount) would each rename a signed copy over it, and the last
 * would drop the other's signature: the second is refused, naming the
 * first.
 *
 * Without holding every file's identity: a file can have a second name in
 * the tree only if it has more than one link, or is reached through a
 * symlink, or through a mount other than the root's. Two names that are
 * neither are two distinct paths, in one mount, without symlinks, to one
 * inode: two links. So the check notes only the identities of such files
 * (none, in a tree without links), and one more pass over the journal
 * finds every entry whose file is among them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/attach_tree_internal.h"

typedef struct member {
    dev_t dev;
    ino_t ino;
    size_t index;
    char *rel;
} member;

typedef struct members {
    member *m;
    size_t n, cap;
} members;

static int cmp_id(const void *a, const void *b)
{
    const file_id *x = a, *y = b;

    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* items, holding n of cap items of size bytes, with room for one more:
 * moved if need be; NULL when out of memory. */
static void *room_for_one(void *items, size_t n, size_t *cap, size_t size, rs_error *err)
{
    size_t more = *cap ? 2 * *cap : 16;
    void *grown;

    if (n < *cap)
        return items;
    if (!(grown = reallocarray(items, more, size))) {
        rs_fail(err, "out of memory");
        return NULL;
    }
    *cap = more;
    return grown;
}

int rs_attach_add_shared(tree_job *t, const file_id *id, rs_error *err)
{
    file_id *shared = room_for_one(t->shared, t->n_shared, &t->cap_shared, sizeof(*shared), err);

    if (!shared)
        return -1;
    t->shared = shared;
    t->shared[t->n_shared++] = *id;
    return 0;
}

static int add_member(members *s, const entry *e, size_t index, rs_error *err)
{
    member *m = room_for_one(s->m, s->n, &s->cap, sizeof(*m), err);

    if (!m)
        return -1;
    s->m = m;
    if (!(s->m[s->n].rel = strdup(e->rel)))
        return rs_fail(err, "out of memory");
    s->m[s->n].dev = e->k.checked.dev;
    s->m[s->n].ino = e->k.checked.ino;
    s->m[s->n++].index = index;
    return 0;
}

/* Every entry to be written whose file is among those noted. */
static int collect_members(tree_job *t, rs_error *err)
{
    for (size_t i = 0; i < t->n; i++) {
        const entry *e = &t->win[i];

        if (e->k.failed || e->k.carried)
            continue;
        if (!e->k.maybe_shared && !bsearch(&e->k.checked, t->shared, t->n_shared, sizeof(*t->shared), cmp_id))
            continue;
        if (add_member(t->step_ctx, e, t->first + i, err) < 0)
            return -1;
    }
    return 0;
}

static int cmp_member(const void *a, const void *b)
{
    const member *x = a, *y = b;

    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino)
        return x->ino < y->ino ? -1 : 1;
    return strcmp(x->rel, y->rel);
}

/* Sorted, the names of one file are next to each other. */
static int refuse_repeats(tree_job *t, members *s, rs_error *err)
{
    qsort(s->m, s->n, sizeof(*s->m), cmp_member);
    for (size_t i = 1; i < s->n; i++) {
        const member *a = &s->m[i - 1], *b = &s->m[i];
        char *msg;

        if (a->dev != b->dev || a->ino != b->ino)
            continue;
        if (asprintf(&msg, "%s/%s: the same file as %s/%s; in place, only one signature can be attached to it",
                     t->o->root, b->rel, t->o->root, a->rel) < 0)
            msg = NULL;
        if (rs_attach_add_problem(t, b->index, msg, err) < 0)
            return -1;
    }
    return 0;
}

int rs_attach_note_same_files(tree_job *t, rs_error *err)
{
    members s = { 0 };
    int rc;

    if (!t->n_shared)
        return 0;
    qsort(t->shared, t->n_shared, sizeof(*t->shared), cmp_id);
    t->step_ctx = &s;
    rc = rs_attach_each_window(t, collect_members, false, err);
    t->step_ctx = NULL;
    if (rc == 0)
        rc = refuse_repeats(t, &s, err);
    for (size_t i = 0; i < s.n; i++)
        free(s.m[i].rel);
    free(s.m);
    return rc;
}

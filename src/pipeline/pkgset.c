/* The binary packages given to sign-template, and the choice among them. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "pipeline/pkgtree.h"

/* Asked in this order; no entry is both a .deb and a directory. */
const rs_pkgsource_ops *const rs_pkgsources[] = { &rs_pkgsource_deb, &rs_pkgsource_dir, NULL };

void rs_pkgset_free(rs_pkgset *s)
{
    for (size_t i = 0; i < s->count; i++)
        rs_pkgtree_free(&s->trees[i]);
    free(s->trees);
    free(s->dir);
    free(s->unreadable);
    memset(s, 0, sizeof(*s));
}

static int add_tree(rs_pkgset *s, rs_pkgtree *t, rs_error *err)
{
    rs_pkgtree *n = realloc(s->trees, (s->count + 1) * sizeof(*n));

    if (!n) {
        rs_pkgtree_free(t);
        return rs_fail(err, "out of memory");
    }
    s->trees = n;
    s->trees[s->count++] = *t;
    return 0;
}

/* An entry that cannot be read (a dangling link, no permission) may be
 * what the template asks for: kept, to say so if nothing else matches. */
static int note_unreadable(rs_pkgset *s, const char *name, int errnum, rs_error *err)
{
    if (s->unreadable_count++ == 0 && asprintf(&s->unreadable, "%s: %s", name, strerror(errnum)) < 0) {
        s->unreadable = NULL;
        return rs_fail(err, "out of memory");
    }
    return 0;
}

/* An entry no package source claims is not a package: skipped. */
static int scan_entry(rs_pkgset *s, const char *dir, const char *name, rs_error *err)
{
    _cleanup_free_ char *path = NULL;
    rs_pkgtree t;
    struct stat st;

    if (!(path = rs_path_join(dir, name)))
        return rs_fail(err, "out of memory");
    if (stat(path, &st) < 0)
        return note_unreadable(s, name, errno, err);
    for (const rs_pkgsource_ops *const *ops = rs_pkgsources; *ops; ops++) {
        if (!(*ops)->claims(name, &st))
            continue;
        if (rs_pkgtree_open_as(&t, *ops, path, err) < 0)
            return -1;
        return add_tree(s, &t, err);
    }
    return 0;
}

int rs_pkgset_scan(const char *dir, rs_pkgset *out, rs_error *err)
{
    struct dirent **names = NULL;
    int n = scandir(dir, &names, NULL, alphasort), rc = 0;

    memset(out, 0, sizeof(*out));
    if (n < 0)
        return rs_fail(err, "%s: %s", dir, strerror(errno));
    if (!(out->dir = strdup(dir)))
        rc = rs_fail(err, "out of memory");
    for (int i = 0; i < n; i++) {
        if (rc == 0 && names[i]->d_name[0] != '.')
            rc = scan_entry(out, dir, names[i]->d_name, err);
        free(names[i]);
    }
    free(names);
    if (rc < 0)
        rs_pkgset_free(out);
    return rc;
}

static int choose(rs_pkgset *s, const char *name, const char *version, rs_pkgtree **out, rs_error *err)
{
    rs_pkgtree *only = NULL, *match = NULL;
    size_t count = 0, matches = 0;
    char found[512] = "";

    for (size_t i = 0; i < s->count; i++) {
        rs_pkgtree *t = &s->trees[i];
        size_t used = strlen(found);

        if (strcmp(t->name, name) != 0)
            continue;
        count++;
        only = t;
        snprintf(found + used, sizeof(found) - used, "%s%s", used ? ", " : "", t->version ? t->version : "(unpacked)");
        if (version && t->version && !strcmp(t->version, version)) {
            matches++;
            match = t;
        }
    }
    if (count == 0 && s->unreadable_count > 1)
        return rs_fail(err, "package %s: not found among the packages (%zu entries could not be read, the first %s)",
                       name, s->unreadable_count, s->unreadable);
    if (count == 0 && s->unreadable_count == 1)
        return rs_fail(err, "package %s: not found among the packages (could not read %s)", name, s->unreadable);
    if (count == 0)
        return rs_fail(err, "package %s: not found among the packages", name);
    if (count == 1 && (!version || !only->version || !strcmp(only->version, version))) {
        *out = only;
        return 0;
    }
    if (matches == 1) {
        *out = match;
        return 0;
    }
    if (version)
        return rs_fail(err, "package %s: the template asks for version %s, found %s", name, version, found);
    return rs_fail(err, "package %s: ambiguous, several versions present (%s)", name, found);
}

/* Its errors name the directory searched: what is missing or doubled is
 * there. */
int rs_pkgset_choose(rs_pkgset *s, const char *name, const char *version, rs_pkgtree **out, rs_error *err)
{
    if (choose(s, name, version, out, err) < 0)
        return s->dir ? rs_error_prefix(err, "%s", s->dir) : -1;
    return 0;
}

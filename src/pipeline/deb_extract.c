/* A template's source-template/, extracted from its .deb. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "pipeline/deb_archive.h"
#include "pipeline/files_json.h"

/* dest/rel and every directory above it, below dest. */
static int mkdirs(const char *dest, const char *rel, rs_error *err)
{
    _cleanup_free_ char *path = NULL;

    if (asprintf(&path, "%s/%s/", dest, rel) < 0)
        return rs_fail(err, "out of memory");
    return rs_mkdir_parents(path, err);
}

typedef struct extraction {
    const char *prefix;
    const char *dest;
    rs_extract_limits limits;
    rs_extract_limits left;
    char **links;          /* symlinks made so far: nothing is written through one */
    size_t n_links;
} extraction;

static bool below_a_link(const extraction *x, const char *rel)
{
    for (size_t i = 0; i < x->n_links; i++) {
        size_t n = strlen(x->links[i]);

        if (!strncmp(rel, x->links[i], n) && (rel[n] == '/' || rel[n] == '\0'))
            return true;
    }
    return false;
}

/* The target is checked when the tree is copied into the source package
 * (src/pipeline/source_tree.c): only then does every name exist. */
static int extract_symlink(struct archive_entry *e, extraction *x, const char *name, const char *rel, rs_error *err)
{
    _cleanup_free_ char *path = NULL;
    const char *target = sym_archive_entry_symlink(e);
    const char *slash = strrchr(rel, '/');
    char **grown;

    if (!target || !*target)
        return rs_fail(err, "%s: a symlink with an empty target", name);
    if (slash) {
        _cleanup_free_ char *dir = strndup(rel, (size_t)(slash - rel));

        if (!dir || mkdirs(x->dest, dir, err) < 0)
            return -1;
    }
    if (!(grown = realloc(x->links, (x->n_links + 1) * sizeof(*grown))))
        return rs_fail(err, "out of memory");
    x->links = grown;
    if (!(x->links[x->n_links] = strdup(rel)) || !(path = rs_path_join(x->dest, rel)))
        return rs_fail(err, "out of memory");
    x->n_links++;
    if (symlink(target, path) < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    return 0;
}

static int extract_file(struct archive *a, struct archive_entry *e, extraction *x, const char *rel, rs_error *err)
{
    _cleanup_free_ char *path = NULL;
    _cleanup_close_ int fd = -1;
    mode_t mode = (sym_archive_entry_perm(e) & 0111) ? 0755 : 0644;
    const char *dest = x->dest;
    uint64_t size;
    const char *slash = strrchr(rel, '/');

    if (slash) {
        _cleanup_free_ char *dir = strndup(rel, (size_t)(slash - rel));

        if (!dir || mkdirs(dest, dir, err) < 0)
            return -1;
    }
    if (!(path = rs_path_join(dest, rel)))
        return rs_fail(err, "out of memory");
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    if (rs_archive_copy_data(a, fd, path, x->left.bytes, "data.tar", &size, err) < 0)
        return rs_error_prefix(err, "source template: %s", rel);
    x->left.bytes -= size;
    return 0;
}

static int extract_entry(void *ctx, struct archive *data, struct archive_entry *e, const char *name, rs_error *err)
{
    extraction *x = ctx;
    size_t plen = strlen(x->prefix);
    const char *rel;

    if (strncmp(name, x->prefix, plen) != 0 || (name[plen] != '/' && name[plen] != '\0'))
        return 0;
    rel = name[plen] ? name + plen + 1 : "";
    if (!*rel)
        return 0;
    if (!rs_valid_relative_path(rel))
        return rs_fail(err, "%s: unsafe path in the template", name);
    if (x->left.entries-- == 0)
        return rs_fail(err, "%s: the source template has more than %zu entries, the limit", name, x->limits.entries);
    if (below_a_link(x, rel))
        return rs_fail(err, "%s: a path through a symlink in the source template", name);
    switch (rs_deb_entry_type(e)) {
    case RS_NODE_DIR:
        return mkdirs(x->dest, rel, err);
    case RS_NODE_FILE:
        return extract_file(data, e, x, rel, err);
    case RS_NODE_SYMLINK:
        return extract_symlink(e, x, name, rel, err);
    default:
        return rs_fail(err, "%s: hard links and special files are not allowed in a source template", name);
    }
}

int rs_deb_extract_tree(const char *path, const char *prefix, const char *dest, const rs_extract_limits *limits,
                        rs_error *err)
{
    extraction x = { prefix, dest, *limits, *limits, NULL, 0 };
    int rc = rs_deb_walk_data(path, extract_entry, &x, err);

    for (size_t i = 0; i < x.n_links; i++)
        free(x.links[i]);
    free(x.links);
    return rc;
}

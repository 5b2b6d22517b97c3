/* The -signed source package: the template's source-template/ copied
 * into OUTDIR, the signatures linked into its debian/signatures/, and
 * dpkg-source run over it with fixed file times. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "base/spawn.h"
#include "base/walk.h"
#include "pipeline/sign_job.h"
#include "pipeline/source_tree.h"

/* debian/signatures/ of the source tree: the files of signatures/, linked. */
static int link_sig(rs_sign_job *j, rs_sign_item *it, void *ctx, rs_error *err)
{
    const char *base = ctx;
    _cleanup_free_ char *name = rs_sign_item_sig_name(it), *from = NULL, *to = NULL;

    if (!name || !(from = rs_path_join(j->sigdir, name)) || !(to = rs_path_join(base, name)))
        return rs_fail(err, "out of memory");
    if (rs_mkdir_parents(to, err) < 0)
        return -1;
    return link(from, to) < 0 ? rs_fail(err, "%s: %s", to, strerror(errno)) : 0;
}

static int set_mtime(void *ctx, const char *rel, const char *path, const struct stat *st, rs_error *err)
{
    const time_t *mtime = ctx;
    struct timespec ts[2] = { { *mtime, 0 }, { *mtime, 0 } };

    (void)rel, (void)st;
    if (utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW) < 0)
        return rs_fail(err, "%s: cannot set its time: %s", path, strerror(errno));
    return 0;
}

/* Copied before anything is signed: a source-template that cannot be
 * used is refused without a signature made for nothing. */
int rs_sign_copy_source_template(rs_sign_job *j, rs_error *err)
{
    const char *version = j->tpl.source_version, *colon;

    if (!j->tpl.source_dir)
        return 0;
    colon = strchr(version, ':');
    if (asprintf(&j->source_tree, "%s/%s-%s", j->work, j->tpl.source_name, colon ? colon + 1 : version) < 0)
        return rs_fail(err, "out of memory");
    return rs_copy_source_tree(j->tpl.source_dir, j->source_tree, err);
}

int rs_sign_build_source_package(rs_sign_job *j, rs_error *err)
{
    _cleanup_free_ char *sigs = NULL;
    time_t mtime = j->mtime;

    if (!j->source_tree)
        return 0;
    if (asprintf(&sigs, "%s/debian/signatures", j->source_tree) < 0)
        return rs_fail(err, "out of memory");
    if (rs_sign_store_each(j, link_sig, sigs, err) < 0)
        return -1;
    /* Fixed mtimes, so dpkg-source builds the same tarball every time. */
    if (rs_walk_tree(j->source_tree, NULL, set_mtime, &mtime, err) < 0 ||
        set_mtime(&mtime, "", j->source_tree, NULL, err) < 0)
        return -1;
    char *argv[] = { "dpkg-source", "--format=3.0 (native)", "-b", basename(j->source_tree), NULL };
    return rs_run_tool(argv, j->work, err);
}

/* The -signed source package: the template's source-template/ copied
 * into OUTDIR, the signatures linked into its debian/signatures/, and
 * dpkg-source run over it with fixed file times. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "base/spawn.h"
#include "pipeline/sign_job.h"
#include "pipeline/source_tree.h"

/* debian/signatures/ of the source tree: the files of signatures/, linked. */
static int link_sig(const rs_sign_job *j, const char *base, const rs_sign_item *it, rs_error *err)
{
    _cleanup_free_ char *from = NULL, *to = NULL;

    if (asprintf(&from, "%s/%s", j->sigdir, it->sig_name) < 0 || asprintf(&to, "%s/%s", base, it->sig_name) < 0)
        return rs_fail(err, "out of memory");
    if (rs_mkdir_parents(to, err) < 0)
        return -1;
    return link(from, to) < 0 ? rs_fail(err, "%s: %s", to, strerror(errno)) : 0;
}

/* nftw() passes no context; set just before the walk. */
static time_t tree_mtime;

static int set_mtimes(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    struct timespec ts[2];

    (void)st, (void)flag, (void)ftw;
    ts[0].tv_sec = ts[1].tv_sec = tree_mtime;
    ts[0].tv_nsec = ts[1].tv_nsec = 0;
    return utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW);
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

int rs_sign_build_source_package(const rs_sign_job *j, rs_error *err)
{
    _cleanup_free_ char *sigs = NULL;

    if (!j->source_tree)
        return 0;
    if (asprintf(&sigs, "%s/debian/signatures", j->source_tree) < 0)
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < j->n_items; i++)
        if (link_sig(j, sigs, &j->items[i], err) < 0)
            return -1;
    /* Fixed mtimes, so dpkg-source builds the same tarball every time. */
    tree_mtime = j->mtime;
    if (nftw(j->source_tree, set_mtimes, 16, FTW_PHYS) != 0)
        return rs_fail(err, "%s: cannot set file times", j->source_tree);
    char *argv[] = { "dpkg-source", "--format=3.0 (native)", "-b", basename(j->source_tree), NULL };
    return rs_run_tool(argv, j->work, err);
}

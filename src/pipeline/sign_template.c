#include "pipeline/sign_template.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "ops/ops.h"
#include "pipeline/sign_job.h"

static void job_free(rs_sign_job *j)
{
    rs_sign_plan_free(j);
    rs_pkgset_free(&j->inputs);
    rs_template_free(&j->tpl);
    free(j->work);
    free(j->sigdir);
    free(j->source_tree);
}

static int output_mtime(rs_sign_job *j, rs_error *err)
{
    time_t t = 0;
    bool set;

    if (rs_source_date_epoch(&t, &set, err) < 0)
        return -1;
    j->mtime = set ? t : j->tpl.changelog_time;
    return 0;
}

static int assemble_outputs(rs_sign_job *j, rs_error *err)
{
    _cleanup_free_ char *tmpl_dir = NULL;

    if (asprintf(&tmpl_dir, "%s/source-template", j->work) < 0)
        return rs_fail(err, "out of memory");
    if (rs_sign_build_source_package(j, err) < 0)
        return -1;
    rs_remove_tree(tmpl_dir);   /* a .deb template's unpacked source-template */
    return 0;
}

static int make_workdir(rs_sign_job *j, rs_error *err)
{
    _cleanup_free_ char *copy = strdup(j->o->output_dir), *copy2 = strdup(j->o->output_dir);
    struct stat st;

    if (!copy || !copy2)
        return rs_fail(err, "out of memory");
    if (lstat(j->o->output_dir, &st) == 0)
        return rs_fail(err, "%s: already exists", j->o->output_dir);
    if (asprintf(&j->work, "%s/.%s.partial-XXXXXX", dirname(copy), basename(copy2)) < 0) {
        j->work = NULL;
        return rs_fail(err, "out of memory");
    }
    if (!mkdtemp(j->work))
        return rs_fail_sys(err, errno, "%s: cannot create a work directory: %s", j->o->output_dir, strerror(errno));
    chmod(j->work, 0755);
    if (asprintf(&j->sigdir, "%s/signatures", j->work) < 0) {
        j->sigdir = NULL;
        return rs_fail(err, "out of memory");
    }
    return 0;
}

/* Everything that needs no package: a template that cannot be used is
 * refused before a package is opened. The source-template is copied
 * before anything is signed, so none is made for nothing. */
static int prepare(rs_sign_job *j, rs_error *err)
{
    if (make_workdir(j, err) < 0 || rs_sign_store_open(j, err) < 0)
        return -1;
    if (rs_template_load(j->o->template_spec, j->work, &j->sink, &j->tpl, err) < 0)
        return -1;
    if (rs_sign_check_trusted_certs(j, err) < 0 || output_mtime(j, err) < 0)
        return -1;
    return rs_sign_copy_source_template(j, err);
}

/* The packages opened and each listed file's package chosen. */
static int plan(rs_sign_job *j, rs_error *err)
{
    if (rs_pkgset_scan(j->o->packages_dir, &j->inputs, err) < 0)
        return -1;
    return rs_sign_plan_items(j, err);
}

/* signatures.tar.gz's writer starts before any package is read, so
 * loading libarchive happens meanwhile; it writes the manifest's entries
 * too, as the files are signed. Phase A checks every file (sign_digest.c)
 * before phase B signs any. */
static int check_and_sign(rs_sign_job *j, rs_error *err)
{
    int rc = rs_sign_manifest_open(j, err);

    if (rc == 0)
        rc = rs_sign_start_tarball(j, err);
    if (rc == 0)
        rc = rs_sign_check_all(j, err);
    if (rc == 0)
        rc = rs_sign_all(j, err);
    if (rc == 0)
        rc = rs_sign_finish_tarball(j, err);
    rs_tarball_feed_free(TAKE_PTR(j->feed));   /* stopped before the manifest, the slots or the work directory can go */
    rs_sign_slots_free(j);
    if (rc == 0)
        rc = rs_sign_manifest_close(j, err);
    rs_sign_manifest_free(TAKE_PTR(j->manifest));
    return rc;
}

static int finish(rs_sign_job *j, rs_error *err)
{
    if (assemble_outputs(j, err) < 0 || rs_sync_filesystem(j->work, err) < 0)
        return -1;
    if (rename(j->work, j->o->output_dir) < 0)
        return rs_fail(err, "%s: cannot move the result into place: %s", j->o->output_dir, strerror(errno));
    return 0;
}

int rs_sign_template(const rs_sign_template_options *o, rs_error *err)
{
    rs_sign_job j = { .o = o };
    int rc = prepare(&j, err);

    if (rc == 0)
        rc = plan(&j, err);
    if (rc == 0)
        rc = check_and_sign(&j, err);
    if (rc == 0)
        rc = finish(&j, err);
    if (rc < 0 && j.work)
        rs_remove_tree(j.work);
    job_free(&j);
    return rc;
}

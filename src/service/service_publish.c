#include "service/service_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "base/file.h"
#include "crypto/ossl.h"
#include "crypto/pkcs11_pin.h"
#include "pipeline/template.h"
#include "service/daemon.h"
#include "service/release_meta.h"
#include "service/repo.h"
#include "service/state.h"
#include "service/upload.h"
#include "translog/log.h"

/* ---- publishing ---- */

/* A failed upload is tried again after this long (service_pass.c's
 * backoff takes over if it fails again). */
#define UPLOAD_RETRY_S 60

static int append_to_log(rs_service *s, const rs_state_row *row, rs_error *err)
{
    json_auto_t *entries = json_loads(row->entries ? row->entries : "", 0, NULL);
    _cleanup_free_ json_t **list = NULL;
    size_t n = json_array_size(entries);
    bool logged = false;

    if (!json_is_array(entries))
        return rs_fail(err, "%s: the state holds no log entries for it", row->req.id);
    /* A crash after the append and before the state noted it: the
     * request's entries are in the log already (its first one says so). */
    if (n == 0 || rs_translog_contains(s->log, json_array_get(entries, 0), &logged, err) < 0 || logged)
        return n && !logged ? -1 : 0;
    if (!(list = calloc(n, sizeof(json_t *))))
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < n; i++)
        list[i] = json_array_get(entries, i);
    return rs_translog_append(s->log, list, n, NULL, err);
}

static int copy_dir(const char *from, const char *to, rs_error *err)
{
    struct dirent **names = NULL;
    int n = scandir(from, &names, NULL, alphasort), rc = 0;

    if (n < 0)
        return rs_fail(err, "%s: %s", from, strerror(errno));
    for (int i = 0; i < n; i++) {
        _cleanup_free_ char *src = rs_path_join(from, names[i]->d_name), *dst = rs_path_join(to, names[i]->d_name);

        if (rc == 0 && names[i]->d_name[0] != '.') {
            if (!src || !dst)
                rc = rs_fail(err, "out of memory");
            else if (rs_copy_file(src, dst, 0644, err) < 0)
                rc = -1;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

/* pub/ becomes OUTPUT/<id> in one rename; across filesystems, through a
 * hidden directory that a later pass removes if this one dies. */
static int move_into_output(rs_service *s, const char *pub, const char *dest, const char *id, rs_error *err)
{
    _cleanup_free_ char *tmp = NULL;
    int rc = 0;

    if (rename(pub, dest) == 0)
        return 0;
    if (errno != EXDEV)
        return rs_fail(err, "%s: %s", dest, strerror(errno));
    if (asprintf(&tmp, "%s/.%s.partial-XXXXXX", s->cfg.output, id) < 0 || !mkdtemp(tmp))
        return rs_fail_sys(err, errno, "%s: cannot create a directory: %s", s->cfg.output, strerror(errno));
    /* Each step reports its own failure once; err is never read here. */
    if (chmod(tmp, 0755) < 0)
        rc = rs_fail(err, "%s: %s", tmp, strerror(errno));
    else if (copy_dir(pub, tmp, err) < 0 || rs_sync_path(tmp, err) < 0)
        rc = -1;
    else if (rename(tmp, dest) < 0)
        rc = rs_fail(err, "%s: %s", dest, strerror(errno));
    if (rc < 0)
        rs_remove_tree(tmp);
    return rc;
}

/* The published files must be exactly the ones signed. */
static int check_outputs(const char *dest, const char *outputs, rs_error *err)
{
    json_auto_t *list = json_loads(outputs ? outputs : "", 0, NULL);
    size_t i;
    json_t *o;

    if (!json_is_array(list))
        return rs_fail(err, "%s: the state records no outputs", dest);
    json_array_foreach(list, i, o) {
        _cleanup_free_ char *path = rs_path_join(dest, json_string_value(json_object_get(o, "name")));
        char hex[2 * SHA256_DIGEST_LENGTH + 1];

        if (!path)
            return rs_fail(err, "out of memory");
        if (svc_file_sha256(path, hex, NULL, err) < 0)
            return -1;
        if (strcmp(hex, json_string_value(json_object_get(o, "sha256")) ?: ""))
            return rs_fail(err, "%s: not the file that was signed", path);
    }
    return 0;
}

/* A -signed version not newer than the last published, checked again
 * here: another request of the same source may have been published since
 * this one was signed (an embargo released late, two in one pass). The
 * request fails, refused, before its signatures are logged or published;
 * staging is cleared, so nothing of it is left to publish. */
static int refuse(rs_service *s, const rs_state_row *row, const stage *g, const rs_error *why, rs_error *err)
{
    rs_notef(s->note, s->note_ctx, &(rs_log_fields){ .priority = LOG_WARNING, .request = row->req.id },
             "%s: refused: %s", row->req.id, why->msg);
    if (rs_state_set_failed(s->state, row->req.id, why->msg, false, 0, err) < 0)
        return -1;
    rs_remove_tree(g->dir);
    return rs_fail(err, "%s: %s", row->req.id, why->msg);
}

int svc_publish(rs_service *s, const rs_state_row *row, bool *refused, rs_error *err)
{
    _cleanup_(svc_stage_free) stage g = { 0 };   /* still freed if stage_paths never runs */
    _cleanup_free_ char *dest = rs_path_join(s->cfg.output, row->req.id), *source = NULL, *version = NULL;
    rs_error why;

    *refused = false;
    if (!dest || svc_stage_paths(s, row->req.id, &g, err) < 0)
        return rs_fail(err, "out of memory");
    if (svc_published_source(access(dest, F_OK) == 0 ? dest : g.pub, &source, &version, err) < 0)
        return -1;
    if (source && svc_check_newer(s, &row->req, source, version, &why) < 0) {
        *refused = true;
        return refuse(s, row, &g, &why, err);
    }
    if (append_to_log(s, row, err) < 0)
        return rs_error_prefix(err, "%s", row->req.id);
    if (access(dest, F_OK) < 0) {
        if (access(g.pub, F_OK) < 0) {
            note(s, "%s: its signed outputs are gone; signing it again", row->req.id);
            return rs_state_set_status(s->state, row->req.id, RS_REQ_PENDING, NULL, err);
        }
        if (move_into_output(s, g.pub, dest, row->req.id, err) < 0 || rs_sync_path(s->cfg.output, err) < 0)
            return -1;
    }
    if (check_outputs(dest, row->outputs, err) < 0)
        return -1;
    /* The signed upload (service/upload.c); an embargoed request gets here
     * only at `service release`. An upload that cannot be made or
     * delivered fails the request, never goes out unsigned; it is tried
     * again later, as a transient failure. */
    if (rs_upload_published(&s->cfg.upload, dest, g.dir, &why) < 0) {
        rs_notef(s->note, s->note_ctx, &(rs_log_fields){ .priority = LOG_WARNING, .request = row->req.id },
                 "%s: failed, for now: %s", row->req.id, why.msg);
        rs_state_set_failed(s->state, row->req.id, why.msg, true, (int64_t)time(NULL) + UPLOAD_RETRY_S, err);
        return rs_fail(err, "%s: %s", row->req.id, why.msg);
    }
    if ((source && svc_record_published(s, &row->req, source, version, err) < 0) ||
        rs_state_set_status(s->state, row->req.id, RS_REQ_PUBLISHED, NULL, err) < 0)
        return -1;
    rs_remove_tree(g.dir);
    note(s, "%s: published", row->req.id);
    return 0;
}

/* Hidden directories a pass died in the middle of copying. */
void svc_clean_output(rs_service *s)
{
    struct dirent **names = NULL;
    int n = scandir(s->cfg.output, &names, NULL, alphasort);

    for (int i = 0; i < n; i++) {
        _cleanup_free_ char *path = NULL;

        if (names[i]->d_name[0] == '.' && strstr(names[i]->d_name, ".partial-") &&
            (path = rs_path_join(s->cfg.output, names[i]->d_name)))
            rs_remove_tree(path);
        free(names[i]);
    }
    free(names);
}

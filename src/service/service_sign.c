#include "service/service_internal.h"

#include <dirent.h>
#include <errno.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "base/file.h"
#include "crypto/ossl.h"
#include "ops/image_signer.h"
#include "pipeline/files_json.h"
#include "pipeline/sign_template.h"
#include "pipeline/source_binding.h"
#include "pipeline/template.h"
#include "service/config.h"
#include "service/daemon.h"
#include "service/metrics.h"
#include "service/release_meta.h"
#include "service/repo.h"
#include "service/requests.h"
#include "service/state.h"
#include "translog/log.h"

/* ---- signing one request ---- */


void svc_stage_free(stage *g)
{
    free(g->dir), free(g->pub), free(g->work), free(g->template_deb), free(g->probe), free(g->debs), free(g->out);
    free(g->made);
}

int svc_stage_paths(rs_service *s, const char *id, stage *g, rs_error *err)
{
    _cleanup_free_ char *staging = rs_path_join(s->dir, "staging");

    *g = (stage){ 0 };
    if (!staging || !(g->dir = rs_path_join(staging, id)) || !(g->pub = rs_path_join(g->dir, "pub")))
        return rs_fail(err, "out of memory");
    return 0;
}

static int stage_attempt(stage *g, rs_error *err)
{
    if (mkdir(g->dir, 0700) < 0 && errno != EEXIST)
        return rs_fail_sys(err, errno, "%s: %s", g->dir, strerror(errno));
    if (asprintf(&g->work, "%s/try-XXXXXX", g->dir) < 0 || !mkdtemp(g->work))
        return rs_fail_sys(err, errno, "%s: cannot create a work directory: %s", g->dir, strerror(errno));
    if (!(g->template_deb = rs_path_join(g->work, "template.deb")) || !(g->probe = rs_path_join(g->work, "probe")) ||
        !(g->debs = rs_path_join(g->work, "debs")) || !(g->out = rs_path_join(g->work, "out")) ||
        !(g->made = rs_path_join(g->work, "pub")))
        return rs_fail(err, "out of memory");
    return 0;
}

/* Earlier attempts, best effort: a straggling child may still hold one. */
static void remove_attempts(const stage *g)
{
    struct dirent **names = NULL;
    int n = scandir(g->dir, &names, NULL, alphasort);

    for (int i = 0; i < n; i++) {
        _cleanup_free_ char *path = NULL;

        if (!strncmp(names[i]->d_name, "try-", 4) && (path = rs_path_join(g->dir, names[i]->d_name)))
            rs_remove_tree(path);
        free(names[i]);
    }
    free(names);
}

/* What one attempt has seen of the archive: whether a read found the
 * request's suite embargoed, and, for a request from a state older than
 * the recorded identity, who its suite was at this attempt's first read. */
typedef struct archive_view {
    const rs_state_row *row;
    rs_suite_identity first;
    bool embargoed;
} archive_view;

/* Each read of the archive is judged by the identity it saw: a suite that
 * is not who it was when the request was taken in (an alias repointed
 * between a failure and its retry) is refused for good, and embargo is
 * decided again, so a read of an embargoed suite is held whatever intake
 * said. seen is taken over or freed. */
static int judge_read(rs_service *s, archive_view *v, rs_suite_identity *seen, rs_error *err)
{
    const rs_suite_identity *was = v->row->archive.dir ? &v->row->archive : &v->first;
    _cleanup_free_ char *then = NULL, *now = NULL;
    int rc = 0;

    if (!seen->dir)
        return 0;
    if (!was->dir)
        v->first = *seen, *seen = (rs_suite_identity){ 0 };
    else if (!rs_suite_identity_equal(was, seen))
        rc = !(then = rs_suite_identity_describe(was)) || !(now = rs_suite_identity_describe(seen))
                 ? rs_fail(err, "out of memory")
                 : rs_fail(err, "dists/%s is now %s, not %s as %s; refusing it (an alias repointed?)",
                           v->row->req.suite, now, then, v->row->archive.dir ? "when it was taken in" : "at first read");
    v->embargoed |= rc == 0 && svc_embargoed(s, &v->row->req, was);
    rs_suite_identity_free(seen);
    return rc;
}

static int fetch(rs_service *s, archive_view *v, const char *package, const char *version, const char *dest_dir,
                 const char *dest, rs_error *err)
{
    const rs_request *r = &v->row->req;
    rs_repo repo = svc_archive(s);
    rs_repo_package p;
    rs_suite_identity seen = { 0 };
    _cleanup_free_ char *path = NULL;
    rs_error found;
    int rc = rs_repo_find(&repo, r->suite, r->architecture, package, version, &p, &seen, &found);

    /* A changed suite is refused even if the read failed too. */
    if (judge_read(s, v, &seen, err) < 0)
        rc = -1;
    else if (rc < 0)
        *err = found;
    if (rc < 0) {
        rs_repo_package_free(&p);
        return -1;
    }
    if (!dest && !(path = rs_path_join(dest_dir, strrchr(p.filename, '/') ? strrchr(p.filename, '/') + 1 : p.filename)))
        rc = rs_fail(err, "out of memory");
    else
        rc = rs_repo_fetch(&repo, &p, dest ? dest : path, err);
    rs_repo_package_free(&p);
    return rc;
}

/* The unsigned packages the template names, at the versions it pins. */
static int fetch_inputs(rs_service *s, archive_view *v, const stage *g, rs_error *err)
{
    const rs_request *r = &v->row->req;
    rs_template tpl = { 0 };
    bool used[RS_SIG_TYPES] = { false };
    int rc;

    if (mkdir(g->probe, 0700) < 0 || mkdir(g->debs, 0700) < 0)
        return rs_fail(err, "%s: %s", g->dir, strerror(errno));
    if (rs_template_load(g->template_deb, g->probe, NULL, &tpl, err) < 0)
        return rs_error_prefix(err, "template %s", r->package);
    /* Source binding (pipeline/source_binding.h) starts at the request:
     * what dak says it is for is what the template is. */
    rc = !tpl.source || strcmp(tpl.source, r->source)
             ? rs_fail(err, "template %s: its Source: is %s, but the request is for source %s", r->package,
                       tpl.source ? tpl.source : "unknown", r->source)
             : 0;
    /* What the upload key would upload, refused before anything is signed. */
    if (rc == 0)
        rc = svc_check_signed(s, &tpl, r, err);
    for (size_t i = 0; rc == 0 && i < tpl.files.n_packages; i++) {
        const rs_sign_package *p = &tpl.files.packages[i];
        _cleanup_free_ char *owned = NULL;
        const char *want = rs_template_wanted_version(&tpl, p->name, &owned);

        for (int t = 0; t < RS_SIG_TYPES; t++)
            used[t] |= (p->types >> t) & 1;
        if (!want)
            rc = rs_fail(err, "the template does not say which version of %s it was built against", p->name);
        else
            rc = fetch(s, v, p->name, want, g->debs, NULL, err);
    }
    rs_template_free(&tpl);
    if (rc < 0)
        return -1;
    for (int t = 0; t < RS_SIG_TYPES; t++)
        if (used[t] && !s->by_type[t])
            return rs_fail(err, "no key is configured for sig_type %s", rs_sig_type_name((rs_sig_type)t));
    return used[SIG_EFI] || used[SIG_LINUX_MODULE] ? 0 : rs_fail(err, "the template lists no files to sign");
}

static json_t *log_entries(const char *manifest, const rs_state_row *row, rs_error *err)
{
    json_auto_t *doc = json_load_file(manifest, JSON_REJECT_DUPLICATES, NULL);
    json_t *files = json_object_get(doc, "files"), *out = json_array(), *f;
    size_t i;

    if (!json_is_array(files) || !out) {
        json_decref(out);
        rs_fail(err, "%s: unreadable", manifest);
        return NULL;
    }
    json_array_foreach(files, i, f) {
        json_t *e = json_deep_copy(f);

        json_object_set_new(e, "request", json_string(row->req.id));
        json_object_set_new(e, "template", json_string(row->req.package));
        json_object_set_new(e, "version", json_string(row->req.version));
        json_object_set_new(e, "time", json_integer(row->arrived));
        json_array_append_new(out, e);
    }
    return out;
}

static bool is_output(const char *name)
{
    return name[0] != '.' && (rs_name_has_suffix(name, ".dsc") || rs_name_has_suffix(name, ".tar.xz") ||
                              !strcmp(name, RS_SIGNATURES_TARBALL));
}

static int describe_file(const char *path, const char *name, json_t *list, rs_error *err)
{
    char hex[2 * SHA256_DIGEST_LENGTH + 1];
    uint64_t size;

    if (chmod(path, 0644) < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    if (svc_file_sha256(path, hex, &size, err) < 0 || rs_sync_path(path, err) < 0)
        return -1;
    return json_array_append_new(list, json_pack("{s:s, s:s, s:I}", "name", name, "sha256", hex, "size",
                                                 (json_int_t)size)) == 0 ? 0 : rs_fail(err, "out of memory");
}

/* Moves the source package and signatures.tar.gz from the pipeline's
 * output into pub/, recording their hashes. */
static json_t *collect_outputs(const stage *g, rs_error *err)
{
    struct dirent **names = NULL;
    json_t *list = json_array();
    int n = scandir(g->out, &names, NULL, alphasort), rc = 0;

    /* Published, so readable on purpose: the umask is 077. */
    if (n < 0 || !list || mkdir(g->made, 0755) < 0 || chmod(g->made, 0755) < 0)
        rc = rs_fail(err, "%s: %s", g->out, strerror(errno));
    for (int i = 0; i < n; i++) {
        _cleanup_free_ char *from = rs_path_join(g->out, names[i]->d_name), *to = rs_path_join(g->made, names[i]->d_name);

        if (rc == 0 && is_output(names[i]->d_name)) {
            if (!from || !to)
                rc = rs_fail(err, "out of memory");
            else if (rename(from, to) < 0)
                rc = rs_fail(err, "%s: %s", from, strerror(errno));
            else
                rc = describe_file(to, names[i]->d_name, list, err);
        }
        free(names[i]);
    }
    free(names);
    if (rc == 0 && rs_sync_path(g->made, err) < 0)
        rc = -1;
    if (rc < 0) {
        json_decref(list);
        return NULL;
    }
    return list;
}

static int run_pipeline(rs_service *s, const rs_state_row *row, const stage *g, rs_error *err)
{
    _cleanup_(rs_image_signerp) rs_image_signer *efi = NULL;
    _cleanup_(rs_image_signerp) rs_image_signer *module = NULL;
    const rs_foreign_rule *foreign;
    rs_sign_template_options o = {
        .template_spec = g->template_deb,
        .packages_dir = g->debs,
        .output_dir = g->out,
        .allowlist = s->cfg.allowlist,
        .sign = { .md = EVP_sha256(), .signing_time = true, .time = (time_t)row->arrived },
    };

    /* Each sig_type with its own key, and nothing else (config.c). */
    if ((s->by_type[SIG_EFI] && rs_image_signer_local(s->by_type[SIG_EFI], &efi, err) < 0) ||
        (s->by_type[SIG_LINUX_MODULE] && rs_image_signer_local(s->by_type[SIG_LINUX_MODULE], &module, err) < 0))
        return -1;
    o.signers[SIG_EFI] = efi;
    o.signers[SIG_LINUX_MODULE] = module;
    if ((foreign = rs_service_config_foreign(&s->cfg, row->req.source)))
        o.foreign_sources = (rs_foreign_sources){ (const char *const *)foreign->allowed, foreign->n_allowed };
    return rs_sign_template(&o, err);
}

/* Every signature is a log line too, searchable in the journal by
 * REPROSIGN_REQUEST, REPROSIGN_PACKAGE and REPROSIGN_DIGEST, and counted
 * in the metrics. */
static void record_signatures(rs_service *s, const rs_state_row *row, const json_t *entries,
                              const struct timespec *started)
{
    size_t i;
    json_t *e;

    json_array_foreach(entries, i, e) {
        const char *package = json_string_value(json_object_get(e, "package"));
        const char *digest = json_string_value(json_object_get(e, "signed_digest"));
        const char *type = json_string_value(json_object_get(e, "sig_type"));
        rs_log_fields f = { .request = row->req.id, .package = package, .digest = digest };

        rs_metrics_signed(&s->metrics, RS_FACE_ARCHIVE, type && !strcmp(type, "efi") ? SIG_EFI : SIG_LINUX_MODULE, 1);
        rs_notef(s->note, s->note_ctx, &f, "%s: signed %s/%s (%s) with the %s key", row->req.id, package,
                 json_string_value(json_object_get(e, "path")), digest, type);
    }
    rs_metrics_latency(&s->metrics, RS_FACE_ARCHIVE, rs_metrics_since(started));
}

static void archive_view_free(archive_view *v)
{
    rs_suite_identity_free(&v->first);
}

int svc_sign_request(rs_service *s, const rs_state_row *row, rs_error *err)
{
    _cleanup_(archive_view_free) archive_view v = { .row = row };
    _cleanup_(svc_stage_free) stage g;
    _cleanup_free_ char *manifest = NULL, *outputs_text = NULL, *entries_text = NULL;
    json_auto_t *entries = NULL, *outputs = NULL;
    struct timespec started;
    bool held;

    clock_gettime(CLOCK_MONOTONIC, &started);
    if (svc_stage_paths(s, row->req.id, &g, err) < 0)
        return -1;
    /* Whatever an interrupted attempt left is redone from the start. */
    remove_attempts(&g);
    if (stage_attempt(&g, err) < 0)
        return -1;
    if (fetch(s, &v, row->req.package, row->req.version, NULL, g.template_deb, err) < 0 ||
        fetch_inputs(s, &v, &g, err) < 0 || run_pipeline(s, row, &g, err) < 0)
        return -1;
    if (!(manifest = rs_path_join(g.out, "manifest.json")) || !(entries = log_entries(manifest, row, err)) ||
        !(outputs = collect_outputs(&g, err)))
        return manifest ? -1 : rs_fail(err, "out of memory");
    if (!(outputs_text = json_dumps(outputs, JSON_COMPACT)) ||
        !(entries_text = json_dumps(entries, JSON_COMPACT | JSON_SORT_KEYS)))
        return rs_fail(err, "out of memory");
    rs_remove_tree(g.pub);
    if (rename(g.made, g.pub) < 0)
        return rs_fail(err, "%s: %s", g.pub, strerror(errno));
    held = row->req.embargoed || v.embargoed;
    if (rs_sync_path(g.dir, err) < 0 || rs_state_set_signed(s->state, row->req.id, held, outputs_text, entries_text, err) < 0)
        return -1;
    rs_remove_tree(g.work);
    record_signatures(s, row, entries, &started);
    note(s, "%s: signed%s", row->req.id, held ? " and held (embargoed)" : "");
    return 0;
}

#include "service/service.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <openssl/sha.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "crypto/ossl.h"
#include "pipeline/sign_template.h"
#include "pipeline/template.h"
#include "service/gpgv.h"
#include "service/repo.h"
#include "service/state.h"
#include "translog/log.h"

#define MAX_REQUESTS_FILE (64 * 1024 * 1024)
#define MAX_OUTPUT_FILE ((size_t)2 << 30)

struct rs_service {
    char *dir;
    rs_service_config cfg;
    rs_state *state;
    int lock_fd;
    rs_note_fn note;
    void *note_ctx;
    rs_signer *by_type[2];       /* may alias each other and log_signer */
    rs_signer *log_signer;
    rs_signer *owned[3];
    size_t n_owned;
    rs_translog *log;
};

static void note(rs_service *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(rs_service *s, const char *fmt, ...)
{
    char line[RS_ERROR_MAX + 256];
    va_list ap;

    if (!s->note)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    s->note(s->note_ctx, line);
}

static char *path_join(const char *a, const char *b)
{
    char *p = NULL;

    return asprintf(&p, "%s/%s", a, b) < 0 ? NULL : p;
}

/* Makes a rename or a new file in dir survive a power cut. */
static int sync_path(const char *path, rs_error *err)
{
    _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0 || fsync(fd) < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    return 0;
}

/* ---- init and open ---- */

int rs_service_init(const char *state_dir, const char *config_path, rs_error *err)
{
    rs_service_config cfg;
    _cleanup_free_ char *abs = realpath(config_path, NULL), *db = path_join(state_dir, "state.db"),
                        *staging = path_join(state_dir, "staging");
    _cleanup_(rs_statep) rs_state *st = NULL;

    if (!abs)
        return rs_fail(err, "%s: %s", config_path, strerror(errno));
    if (rs_service_config_load(abs, &cfg, err) < 0)
        return -1;
    rs_service_config_free(&cfg);
    if (!db || !staging)
        return rs_fail(err, "out of memory");
    if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
        return rs_fail(err, "%s: %s", state_dir, strerror(errno));
    if (access(db, F_OK) == 0)
        return rs_fail(err, "%s: already a service state directory", state_dir);
    if ((mkdir(staging, 0700) < 0 && errno != EEXIST))
        return rs_fail(err, "%s: %s", staging, strerror(errno));
    if (rs_state_open(db, true, &st, err) < 0 || rs_state_meta_set(st, "config", abs, err) < 0)
        return -1;
    return 0;
}

static int take_lock(rs_service *s, bool *busy, rs_error *err)
{
    _cleanup_free_ char *path = path_join(s->dir, "lock");

    if (!path)
        return rs_fail(err, "out of memory");
    if (rs_lock_file(path, &s->lock_fd, busy, err) == 0)
        return 0;
    return *busy ? rs_fail(err, "%s: a service is already running on this state", s->dir) : -1;
}

int rs_service_open(const char *state_dir, bool exclusive, rs_note_fn note_fn, void *note_ctx, rs_service **out,
                    bool *busy, rs_error *err)
{
    rs_service *s = calloc(1, sizeof(*s));
    _cleanup_free_ char *db = path_join(state_dir, "state.db"), *config = NULL;
    int rc = 0;

    *out = NULL;
    *busy = false;
    if (!s || !db || !(s->dir = strdup(state_dir))) {
        free(s);
        return rs_fail(err, "out of memory");
    }
    s->lock_fd = -1;
    s->note = note_fn;
    s->note_ctx = note_ctx;
    if (access(db, F_OK) < 0)
        rc = rs_fail(err, "%s: not a service state directory (see 'reprosign service init')", state_dir);
    if (rc == 0 && exclusive)
        rc = take_lock(s, busy, err);
    if (rc == 0)
        rc = rs_state_open(db, false, &s->state, err);
    if (rc == 0 && (rc = rs_state_meta_get(s->state, "config", &config, err)) == 0 && !config)
        rc = rs_fail(err, "%s: the state records no configuration file", state_dir);
    if (rc == 0)
        rc = rs_service_config_load(config, &s->cfg, err);
    if (rc < 0) {
        rs_service_close(s);
        return -1;
    }
    *out = s;
    return 0;
}

void rs_service_close(rs_service *s)
{
    if (s->log)
        rs_translog_close(s->log);
    for (size_t i = 0; i < s->n_owned; i++)
        rs_signer_free(s->owned[i]);
    if (s->state)
        rs_state_close(s->state);
    rs_service_config_free(&s->cfg);
    if (s->lock_fd >= 0)
        close(s->lock_fd);
    free(s->dir);
    free(s);
}

/* ---- keys and the log ---- */

/* One signer per distinct key, so a token is logged into once. */
static int open_key(rs_service *s, const rs_key_spec *spec, const rs_key_spec *const *seen, rs_signer *const *opened,
                    size_t n, rs_signer **out, rs_error *err)
{
    for (size_t i = 0; i < n; i++)
        if (seen[i]->key && !strcmp(seen[i]->key, spec->key) && !strcmp(seen[i]->cert, spec->cert)) {
            *out = opened[i];
            return 0;
        }
    if (rs_signer_open(spec->key, spec->cert, out, err) < 0)
        return -1;
    s->owned[s->n_owned++] = *out;
    return 0;
}

static char *log_dir(rs_service *s)
{
    return s->cfg.log_dir ? strdup(s->cfg.log_dir) : path_join(s->dir, "log");
}

int rs_service_load_keys(rs_service *s, rs_error *err)
{
    const rs_key_spec *seen[3] = { &s->cfg.keys[0], &s->cfg.keys[1], &s->cfg.log_key };
    rs_signer *opened[3] = { 0 };
    _cleanup_free_ char *dir = log_dir(s);

    if (!dir)
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < 3; i++) {
        if (seen[i]->key && open_key(s, seen[i], seen, opened, i, &opened[i], err) < 0)
            return -1;
    }
    s->by_type[0] = opened[0];
    s->by_type[1] = opened[1];
    s->log_signer = opened[2] ? opened[2] : opened[0] ? opened[0] : opened[1];
    if (!s->log_signer)
        return rs_fail(err, "no keys are configured");
    return rs_translog_open(dir, s->log_signer, true, &s->log, err);
}

/* ---- requests ---- */

static int read_requests(rs_service *s, rs_request_list *l, bool *present, rs_error *err)
{
    _cleanup_bytes_ rs_bytes text = { 0 }, sig = { 0 };
    const rs_service_config *c = &s->cfg;

    *present = access(c->requests, F_OK) == 0;
    if (!*present)
        return 0;
    if (rs_read_file(c->requests, MAX_REQUESTS_FILE, &text, err) < 0)
        return rs_error_prefix(err, "%s", c->requests);
    if (c->requests_keyring &&
        (rs_read_file(c->requests_signature, MAX_REQUESTS_FILE, &sig, err) < 0 ||
         rs_gpgv_verify(c->requests_keyring, &text, &sig, err) < 0))
        return rs_error_prefix(err, "%s", c->requests);
    if (rs_requests_parse((const char *)text.data, text.len, l, err) < 0)
        return rs_error_prefix(err, "%s", c->requests);
    return 0;
}

static int ingest(rs_service *s, rs_error *err)
{
    rs_request_list l = { 0 };
    _cleanup_free_ bool *embargoed = NULL;
    size_t added = 0;
    bool present;
    int rc;

    if (read_requests(s, &l, &present, err) < 0 || !present)
        return present ? -1 : 0;
    embargoed = calloc(l.n + 1, sizeof(bool));
    for (size_t i = 0; embargoed && i < l.n; i++)
        embargoed[i] = l.items[i].embargoed || rs_service_config_embargoed(&s->cfg, l.items[i].suite);
    rc = embargoed ? rs_state_add(s->state, &l, embargoed, (int64_t)time(NULL), &added, err)
                   : rs_fail(err, "out of memory");
    if (rc == 0 && added)
        note(s, "%zu new signing request(s)", added);
    rs_request_list_free(&l);
    return rc;
}

/* ---- signing one request ---- */

/* STATE/staging/<id>/ holds pub/, the signed outputs waiting to be
 * published, and one try-XXXXXX/ per attempt. A fresh directory per
 * attempt, because a killed service's children (dpkg-source) may still be
 * writing into the last one. */
typedef struct stage {
    char *dir, *pub, *work, *template_deb, *probe, *debs, *out, *made;
} stage;

static void stage_free(stage *g)
{
    free(g->dir), free(g->pub), free(g->work), free(g->template_deb), free(g->probe), free(g->debs), free(g->out);
    free(g->made);
}

static int stage_paths(rs_service *s, const char *id, stage *g, rs_error *err)
{
    _cleanup_free_ char *staging = path_join(s->dir, "staging");

    *g = (stage){ 0 };
    if (!staging || !(g->dir = path_join(staging, id)) || !(g->pub = path_join(g->dir, "pub")))
        return rs_fail(err, "out of memory");
    return 0;
}

static int stage_attempt(stage *g, rs_error *err)
{
    if (mkdir(g->dir, 0700) < 0 && errno != EEXIST)
        return rs_fail(err, "%s: %s", g->dir, strerror(errno));
    if (asprintf(&g->work, "%s/try-XXXXXX", g->dir) < 0 || !mkdtemp(g->work))
        return rs_fail(err, "%s: cannot create a work directory: %s", g->dir, strerror(errno));
    if (!(g->template_deb = path_join(g->work, "template.deb")) || !(g->probe = path_join(g->work, "probe")) ||
        !(g->debs = path_join(g->work, "debs")) || !(g->out = path_join(g->work, "out")) ||
        !(g->made = path_join(g->work, "pub")))
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

        if (!strncmp(names[i]->d_name, "try-", 4) && (path = path_join(g->dir, names[i]->d_name)))
            rs_remove_tree(path);
        free(names[i]);
    }
    free(names);
}

static int fetch(rs_service *s, const rs_request *r, const char *package, const char *version, const char *dest_dir,
                 const char *dest, rs_error *err)
{
    rs_repo repo = { s->cfg.archive, s->cfg.archive_keyring };
    rs_repo_package p;
    _cleanup_free_ char *path = NULL;
    int rc;

    if (rs_repo_find(&repo, r->suite, r->architecture, package, version, &p, err) < 0)
        return -1;
    if (!dest && !(path = path_join(dest_dir, strrchr(p.filename, '/') ? strrchr(p.filename, '/') + 1 : p.filename)))
        rc = rs_fail(err, "out of memory");
    else
        rc = rs_repo_fetch(&repo, &p, dest ? dest : path, err);
    rs_repo_package_free(&p);
    return rc;
}

/* The unsigned packages the template names, at the versions it pins. */
static int fetch_inputs(rs_service *s, const rs_request *r, const stage *g, rs_signer **signer, rs_error *err)
{
    rs_template tpl = { 0 };
    bool used[2] = { false, false };
    int rc;

    if (mkdir(g->probe, 0700) < 0 || mkdir(g->debs, 0700) < 0)
        return rs_fail(err, "%s: %s", g->dir, strerror(errno));
    if (rs_template_load(g->template_deb, g->probe, &tpl, err) < 0)
        return rs_error_prefix(err, "template %s", r->package);
    rc = 0;
    for (size_t i = 0; rc == 0 && i < tpl.files.n_packages; i++) {
        const rs_sign_package *p = &tpl.files.packages[i];
        _cleanup_free_ char *owned = NULL;
        const char *want = rs_template_wanted_version(&tpl, p->name, &owned);

        for (size_t f = 0; f < p->n_files; f++)
            used[p->files[f].type] = true;
        if (!want)
            rc = rs_fail(err, "the template does not say which version of %s it was built against", p->name);
        else
            rc = fetch(s, r, p->name, want, g->debs, NULL, err);
    }
    rs_template_free(&tpl);
    if (rc < 0)
        return -1;
    for (int t = 0; t < 2; t++)
        if (used[t] && !s->by_type[t])
            return rs_fail(err, "no key is configured for sig_type %s", rs_sig_type_name((rs_sig_type)t));
    if (used[0] && used[1] && s->by_type[0] != s->by_type[1])
        return rs_fail(err, "the template mixes sig_types whose keys differ; one request signs with one key");
    *signer = s->by_type[used[1] && !used[0] ? 1 : 0];
    return *signer ? 0 : rs_fail(err, "the template lists no files to sign");
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
    size_t n = strlen(name);

    return name[0] != '.' && ((n > 4 && !strcmp(name + n - 4, ".dsc")) || (n > 7 && !strcmp(name + n - 7, ".tar.xz")));
}

static int describe_file(const char *path, const char *name, json_t *list, rs_error *err)
{
    _cleanup_bytes_ rs_bytes data = { 0 };
    uint8_t h[SHA256_DIGEST_LENGTH];
    char hex[2 * SHA256_DIGEST_LENGTH + 1];

    if (rs_read_file(path, MAX_OUTPUT_FILE, &data, err) < 0 || sync_path(path, err) < 0)
        return rs_error_prefix(err, "%s", path);
    rs_sha256(data.data, data.len, h);
    rs_hex(h, sizeof(h), hex);
    return json_array_append_new(list, json_pack("{s:s, s:s, s:I}", "name", name, "sha256", hex, "size",
                                                 (json_int_t)data.len)) == 0 ? 0 : rs_fail(err, "out of memory");
}

/* Moves the source package and signatures.tar.xz from the pipeline's
 * output into pub/, recording their hashes. */
static json_t *collect_outputs(const stage *g, rs_error *err)
{
    struct dirent **names = NULL;
    json_t *list = json_array();
    int n = scandir(g->out, &names, NULL, alphasort), rc = 0;

    if (n < 0 || !list || mkdir(g->made, 0755) < 0)
        rc = rs_fail(err, "%s: %s", g->out, strerror(errno));
    for (int i = 0; i < n; i++) {
        _cleanup_free_ char *from = path_join(g->out, names[i]->d_name), *to = path_join(g->made, names[i]->d_name);

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
    if (rc == 0 && sync_path(g->made, err) < 0)
        rc = -1;
    if (rc < 0) {
        json_decref(list);
        return NULL;
    }
    return list;
}

static int run_pipeline(rs_service *s, const rs_state_row *row, const stage *g, rs_signer *signer, rs_error *err)
{
    _cleanup_(rs_image_signerp) rs_image_signer *local = NULL;
    rs_sign_template_options o = {
        .template_spec = g->template_deb,
        .packages_dir = g->debs,
        .output_dir = g->out,
        .allowlist = s->cfg.allowlist,
        .sign = { .md = EVP_sha256(), .signing_time = true, .time = (time_t)row->arrived },
    };

    if (rs_image_signer_local(signer, &local, err) < 0)
        return -1;
    o.signer = local;
    return rs_sign_template(&o, err);
}

static int sign_request(rs_service *s, const rs_state_row *row, rs_error *err)
{
    _cleanup_(stage_free) stage g;
    _cleanup_free_ char *manifest = NULL, *outputs_text = NULL, *entries_text = NULL;
    json_auto_t *entries = NULL, *outputs = NULL;
    rs_signer *signer = NULL;

    if (stage_paths(s, row->req.id, &g, err) < 0)
        return -1;
    /* Whatever an interrupted attempt left is redone from the start. */
    remove_attempts(&g);
    if (stage_attempt(&g, err) < 0)
        return -1;
    if (fetch(s, &row->req, row->req.package, row->req.version, NULL, g.template_deb, err) < 0 ||
        fetch_inputs(s, &row->req, &g, &signer, err) < 0 || run_pipeline(s, row, &g, signer, err) < 0)
        return -1;
    if (!(manifest = path_join(g.out, "manifest.json")) || !(entries = log_entries(manifest, row, err)) ||
        !(outputs = collect_outputs(&g, err)))
        return manifest ? -1 : rs_fail(err, "out of memory");
    if (!(outputs_text = json_dumps(outputs, JSON_COMPACT)) ||
        !(entries_text = json_dumps(entries, JSON_COMPACT | JSON_SORT_KEYS)))
        return rs_fail(err, "out of memory");
    rs_remove_tree(g.pub);
    if (rename(g.made, g.pub) < 0)
        return rs_fail(err, "%s: %s", g.pub, strerror(errno));
    if (sync_path(g.dir, err) < 0 ||
        rs_state_set_signed(s->state, row->req.id, row->req.embargoed, outputs_text, entries_text, err) < 0)
        return -1;
    rs_remove_tree(g.work);
    note(s, "%s: signed%s", row->req.id, row->req.embargoed ? " and held (embargoed)" : "");
    return 0;
}

/* ---- publishing ---- */

static int append_to_log(rs_service *s, const rs_state_row *row, rs_error *err)
{
    json_auto_t *entries = json_loads(row->entries ? row->entries : "", 0, NULL);
    _cleanup_free_ json_t **list = NULL;
    size_t n = json_array_size(entries);

    if (!json_is_array(entries))
        return rs_fail(err, "%s: the state holds no log entries for it", row->req.id);
    if (n == 0 || rs_translog_has_request(s->log, row->req.id))
        return 0;
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
        _cleanup_free_ char *src = path_join(from, names[i]->d_name), *dst = path_join(to, names[i]->d_name);
        _cleanup_bytes_ rs_bytes data = { 0 };

        if (rc == 0 && names[i]->d_name[0] != '.') {
            if (!src || !dst)
                rc = rs_fail(err, "out of memory");
            else if (rs_read_file(src, MAX_OUTPUT_FILE, &data, err) < 0 ||
                     rs_write_file(dst, data.data, data.len, 0644, err) < 0)
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

    if (rename(pub, dest) == 0)
        return 0;
    if (errno != EXDEV)
        return rs_fail(err, "%s: %s", dest, strerror(errno));
    if (asprintf(&tmp, "%s/.%s.partial-XXXXXX", s->cfg.output, id) < 0 || !mkdtemp(tmp))
        return rs_fail(err, "%s: cannot create a directory: %s", s->cfg.output, strerror(errno));
    if (chmod(tmp, 0755) < 0 || copy_dir(pub, tmp, err) < 0 || sync_path(tmp, err) < 0 || rename(tmp, dest) < 0) {
        if (!err->msg[0])
            rs_fail(err, "%s: %s", dest, strerror(errno));
        rs_remove_tree(tmp);
        return -1;
    }
    return 0;
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
        _cleanup_free_ char *path = path_join(dest, json_string_value(json_object_get(o, "name")));
        _cleanup_bytes_ rs_bytes data = { 0 };
        uint8_t h[SHA256_DIGEST_LENGTH];
        char hex[2 * SHA256_DIGEST_LENGTH + 1];

        if (!path || rs_read_file(path, MAX_OUTPUT_FILE, &data, err) < 0)
            return path ? rs_error_prefix(err, "%s", path) : rs_fail(err, "out of memory");
        rs_sha256(data.data, data.len, h);
        rs_hex(h, sizeof(h), hex);
        if (strcmp(hex, json_string_value(json_object_get(o, "sha256")) ?: ""))
            return rs_fail(err, "%s: not the file that was signed", path);
    }
    return 0;
}

static int publish(rs_service *s, const rs_state_row *row, rs_error *err)
{
    _cleanup_(stage_free) stage g = { 0 };   /* still freed if stage_paths never runs */
    _cleanup_free_ char *dest = path_join(s->cfg.output, row->req.id);

    if (!dest || stage_paths(s, row->req.id, &g, err) < 0)
        return rs_fail(err, "out of memory");
    if (append_to_log(s, row, err) < 0)
        return rs_error_prefix(err, "%s", row->req.id);
    if (access(dest, F_OK) < 0) {
        if (access(g.pub, F_OK) < 0) {
            note(s, "%s: its signed outputs are gone; signing it again", row->req.id);
            return rs_state_set_status(s->state, row->req.id, RS_REQ_PENDING, NULL, err);
        }
        if (move_into_output(s, g.pub, dest, row->req.id, err) < 0 || sync_path(s->cfg.output, err) < 0)
            return -1;
    }
    if (check_outputs(dest, row->outputs, err) < 0)
        return -1;
    /* The signed upload (service/upload.c); an embargoed request gets here
     * only at `service release`. An upload that cannot be made or
     * delivered fails the request, never goes out unsigned. */
    rs_error why;
    if (rs_upload_published(&s->cfg.upload, dest, g.dir, &why) < 0) {
        note(s, "%s: failed: %s", row->req.id, why.msg);
        rs_state_set_status(s->state, row->req.id, RS_REQ_FAILED, why.msg, err);
        return rs_fail(err, "%s: %s", row->req.id, why.msg);
    }
    if (rs_state_set_status(s->state, row->req.id, RS_REQ_PUBLISHED, NULL, err) < 0)
        return -1;
    rs_remove_tree(g.dir);
    note(s, "%s: published", row->req.id);
    return 0;
}

/* Hidden directories a pass died in the middle of copying. */
static void clean_output(rs_service *s)
{
    struct dirent **names = NULL;
    int n = scandir(s->cfg.output, &names, NULL, alphasort);

    for (int i = 0; i < n; i++) {
        _cleanup_free_ char *path = NULL;

        if (names[i]->d_name[0] == '.' && strstr(names[i]->d_name, ".partial-") &&
            (path = path_join(s->cfg.output, names[i]->d_name)))
            rs_remove_tree(path);
        free(names[i]);
    }
    free(names);
}

/* ---- passes ---- */

static int sign_pending(rs_service *s, size_t *failed, rs_error *err)
{
    rs_state_row *rows = NULL;
    size_t n = 0;
    int rc = 0;

    if (rs_state_list(s->state, RS_REQ_PENDING, &rows, &n, err) < 0)
        return -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rs_error why;

        if (sign_request(s, &rows[i], &why) == 0)
            continue;
        (*failed)++;
        note(s, "%s: failed: %s", rows[i].req.id, why.msg);
        rc = rs_state_set_status(s->state, rows[i].req.id, RS_REQ_FAILED, why.msg, err);
    }
    rs_state_rows_free(rows, n);
    return rc;
}

static int publish_signed(rs_service *s, rs_error *err)
{
    rs_state_row *rows = NULL;
    size_t n = 0;
    int rc = 0;

    if (rs_state_list(s->state, RS_REQ_SIGNED, &rows, &n, err) < 0)
        return -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = publish(s, &rows[i], err);
    rs_state_rows_free(rows, n);
    return rc;
}

int rs_service_pass(rs_service *s, size_t *failed, rs_error *err)
{
    struct stat st;

    *failed = 0;
    if (stat(s->cfg.output, &st) < 0 || !S_ISDIR(st.st_mode))
        return rs_fail(err, "%s: the output directory does not exist", s->cfg.output);
    clean_output(s);
    /* Finish what an earlier run signed before taking on anything new. */
    if (publish_signed(s, err) < 0 || ingest(s, err) < 0 || sign_pending(s, failed, err) < 0 ||
        publish_signed(s, err) < 0)
        return -1;
    return rs_translog_checkpoint(s->log, err);
}

int rs_service_serve(rs_service *s, volatile sig_atomic_t *stop, rs_error *err)
{
    rs_signer *signers[3] = { s->by_type[0], s->by_type[1] != s->by_type[0] ? s->by_type[1] : NULL, NULL };
    rs_server_options o = { &s->cfg, signers, 2, s->log, s->note, s->note_ctx };
    rs_server *server = NULL;

    if (s->cfg.socket && rs_server_start(&o, &server, err) < 0)
        return -1;
    if (server)
        note(s, "listening on %s", s->cfg.socket);
    while (!*stop) {
        rs_error pass_err;
        size_t failed;

        if (rs_service_pass(s, &failed, &pass_err) < 0)
            note(s, "%s", pass_err.msg);
        for (unsigned t = 0; !*stop && t < s->cfg.poll_interval * 10; t++)
            nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
    }
    if (server)
        rs_server_stop(server);
    return rs_translog_checkpoint(s->log, err);
}

static int find_row(rs_service *s, const char *id, rs_state_row **rows, size_t *n, rs_state_row **row, rs_error *err)
{
    *row = NULL;
    if (rs_state_list(s->state, -1, rows, n, err) < 0)
        return -1;
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*rows)[i].req.id, id))
            *row = &(*rows)[i];
    return *row ? 0 : rs_fail(err, "no request %s", id);
}

int rs_service_release(rs_service *s, const char *id, bool publish_now, rs_error *err)
{
    rs_state_row *rows = NULL, *row;
    size_t n = 0;
    int rc;

    if (!rs_valid_request_id(id))
        return rs_fail(err, "'%s' is not a request id", id);
    if (rs_state_release(s->state, id, err) < 0)
        return -1;
    if (!publish_now)
        return 0;
    rc = find_row(s, id, &rows, &n, &row, err);
    if (rc == 0)
        rc = publish(s, row, err);
    rs_state_rows_free(rows, n);
    /* The entries it exported are covered by a signed head before this returns. */
    return rc < 0 ? -1 : rs_translog_checkpoint(s->log, err);
}

static json_t *row_json(const rs_state_row *r)
{
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:s, s:I, s:I}", "id", r->req.id, "package",
                          r->req.package, "source", r->req.source, "suite", r->req.suite, "codename",
                          r->req.codename, "architecture", r->req.architecture, "version", r->req.version,
                          "embargoed", r->req.embargoed, "status", rs_req_status_name(r->status), "arrived",
                          (json_int_t)r->arrived, "updated", (json_int_t)r->updated);

    if (o && r->reason)
        json_object_set_new(o, "reason", json_string(r->reason));
    if (o && r->outputs)
        json_object_set_new(o, "outputs", json_loads(r->outputs, 0, NULL));
    return o;
}

int rs_service_status(rs_service *s, json_t **out, rs_error *err)
{
    rs_state_row *rows = NULL;
    size_t n = 0;
    json_t *list = json_array();

    if (!list || rs_state_list(s->state, -1, &rows, &n, err) < 0) {
        json_decref(list);
        return list ? -1 : rs_fail(err, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        json_array_append_new(list, row_json(&rows[i]));
    rs_state_rows_free(rows, n);
    *out = json_pack("{s:o}", "requests", list);
    return *out ? 0 : rs_fail(err, "out of memory");
}

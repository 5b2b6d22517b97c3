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
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "base/iso_time.h"
#include "crypto/ossl.h"
#include "crypto/pkcs11_pin.h"
#include "pipeline/sign_template.h"
#include "pipeline/template.h"
#include "service/gpgv.h"
#include "service/metrics.h"
#include "service/release_meta.h"
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
    rs_signer *by_type[2];       /* may alias each other */
    rs_signer *owned[3];
    size_t n_owned;
    rs_translog *log;
    rs_metrics metrics;
    int64_t last_success;        /* of a whole pass, for the metrics */
};

#define note(s, ...) rs_notef((s)->note, (s)->note_ctx, NULL, __VA_ARGS__)

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

/* The state holds embargoed requests until their release: nobody else may
 * read it. init makes it so whatever was there before; open refuses a
 * state that is not, naming the path. */
static int make_private(const char *dir, rs_error *err)
{
    _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0 || fchmod(fd, 0700) < 0)
        return rs_fail(err, "%s: %s", dir, strerror(errno));
    return 0;
}

static int check_private(const char *path, rs_error *err)
{
    struct stat st;

    if (lstat(path, &st) < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    if (st.st_mode & 077)
        return rs_fail(err, "%s: mode %04o lets other users read the service's state, embargoed requests "
                            "included (chmod go= it)", path, (unsigned)(st.st_mode & 07777));
    return 0;
}

/* The output and log directories are published: readable on purpose
 * (the service's umask is 077). An existing one is left as it is. */
static int make_published(const char *dir, rs_error *err)
{
    if (mkdir(dir, 0755) < 0)
        return errno == EEXIST ? 0 : rs_fail(err, "%s: %s", dir, strerror(errno));
    return chmod(dir, 0755) == 0 ? 0 : rs_fail(err, "%s: %s", dir, strerror(errno));
}

/* Without a configured log_key, the service's own: STATE/log.key, named
 * <hostname>/reprosign; STATE/log.vkey is what verifiers pin. */
static int make_log_key(const char *state_dir, rs_error *err)
{
    char host[256] = "", name[300];
    _cleanup_free_ char *prefix = path_join(state_dir, "log");

    if (!prefix)
        return rs_fail(err, "out of memory");
    if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
        snprintf(host, sizeof(host), "localhost");
    snprintf(name, sizeof(name), "%s/reprosign", host);
    return rs_log_keygen(name, RS_NOTE_ALG_ED25519, prefix, err);
}

int rs_service_init(const char *state_dir, const char *config_path, rs_error *err)
{
    rs_service_config cfg;
    _cleanup_free_ char *abs = realpath(config_path, NULL), *db = path_join(state_dir, "state.db"),
                        *staging = path_join(state_dir, "staging");
    _cleanup_(rs_statep) rs_state *st = NULL;
    bool own_log_key;
    int rc;

    if (!abs)
        return rs_fail(err, "%s: %s", config_path, strerror(errno));
    if (rs_service_config_load(abs, &cfg, err) < 0)
        return -1;
    rc = make_published(cfg.output, err);
    if (rc == 0 && cfg.log_dir)
        rc = make_published(cfg.log_dir, err);
    own_log_key = !cfg.log_key;
    rs_service_config_free(&cfg);
    if (rc < 0)
        return -1;
    if (!db || !staging)
        return rs_fail(err, "out of memory");
    if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
        return rs_fail(err, "%s: %s", state_dir, strerror(errno));
    if (access(db, F_OK) == 0)
        return rs_fail(err, "%s: already a service state directory", state_dir);
    if (make_private(state_dir, err) < 0)
        return -1;
    if (mkdir(staging, 0700) < 0 && errno != EEXIST)
        return rs_fail(err, "%s: %s", staging, strerror(errno));
    if (make_private(staging, err) < 0 || (own_log_key && make_log_key(state_dir, err) < 0))
        return -1;
    if (rs_state_open(db, true, &st, err) < 0 || rs_state_meta_set(st, "config", abs, err) < 0)
        return -1;
    return chmod(db, 0600) == 0 ? 0 : rs_fail(err, "%s: %s", db, strerror(errno));
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
    rs_metrics_init(&s->metrics);
    s->note = note_fn;
    s->note_ctx = note_ctx;
    if (access(db, F_OK) < 0)
        rc = rs_fail(err, "%s: not a service state directory (see 'reprosign service init')", state_dir);
    if (rc == 0)
        rc = check_private(state_dir, err);
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
    rs_metrics_destroy(&s->metrics);
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
    const rs_key_spec *seen[2] = { &s->cfg.keys[0], &s->cfg.keys[1] };
    rs_signer *opened[2] = { 0 };
    _cleanup_free_ char *dir = log_dir(s), *own_key = path_join(s->dir, "log.key");

    if (!dir || !own_key)
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < 2; i++) {
        if (seen[i]->key && open_key(s, seen[i], seen, opened, i, &opened[i], err) < 0)
            return -1;
    }
    s->by_type[0] = opened[0];
    s->by_type[1] = opened[1];
    /* Two spellings of one token object are still one key. */
    if (opened[0] && opened[1] && EVP_PKEY_eq(X509_get0_pubkey(opened[0]->cert), X509_get0_pubkey(opened[1]->cert)) == 1)
        return rs_fail(err, "the efi and linux-module keys are one key; give each sig_type its own key");
    rs_p11_pin_scrub_env();
    if (s->cfg.allow_unsigned_archive)
        rs_notef(s->note, s->note_ctx, &(rs_log_fields){ .priority = LOG_WARNING },
                 "allow_unsigned_archive is set: unsigned Release files and requests are accepted; "
                 "never run so in production");
    if (!opened[0] && !opened[1])
        return rs_fail(err, "no keys are configured");
    return rs_translog_open(dir, s->cfg.log_key ? s->cfg.log_key : own_key, true, &s->log, err);
}

/* ---- requests ---- */

static time_t max_age(const rs_service *s)
{
    return (time_t)s->cfg.max_age_days * 86400;
}

static rs_repo archive(const rs_service *s)
{
    return (rs_repo){ s->cfg.archive, s->cfg.archive_keyring, max_age(s) };
}

/* Embargo goes by who a suite is, not by how the request spells it: its
 * suite, its codename, the directory dists/<suite> resolves to, and the
 * Release's own Suite: and Codename:. A suite whose identity cannot be
 * read is held: a request is never published by mistake. */
static bool suite_embargoed(rs_service *s, const rs_request *r)
{
    rs_repo repo = archive(s);
    rs_release_meta meta = { 0 };
    _cleanup_free_ char *dir = NULL;
    rs_error ignored;
    bool held;

    if (rs_service_config_embargoed(&s->cfg, r->suite) || rs_service_config_embargoed(&s->cfg, r->codename))
        return true;
    held = rs_repo_suite_identity(&repo, r->suite, &meta, &dir, &ignored) < 0 ||
           rs_service_config_embargoed(&s->cfg, dir) ||
           (meta.suite && rs_service_config_embargoed(&s->cfg, meta.suite)) ||
           (meta.codename && rs_service_config_embargoed(&s->cfg, meta.codename));
    rs_release_meta_free(&meta);
    return held;
}

static int read_requests(rs_service *s, rs_request_list *l, bool *present, rs_error *err)
{
    _cleanup_bytes_ rs_bytes text = { 0 }, sig = { 0 };
    time_t signed_at = 0;
    const rs_service_config *c = &s->cfg;

    *present = access(c->requests, F_OK) == 0;
    if (!*present)
        return 0;
    if (rs_read_file(c->requests, MAX_REQUESTS_FILE, &text, err) < 0)
        return rs_error_prefix(err, "%s", c->requests);
    if (c->requests_keyring &&
        (rs_read_file(c->requests_signature, MAX_REQUESTS_FILE, &sig, err) < 0 ||
         rs_gpgv_verify(c->requests_keyring, &text, &sig, &signed_at, err) < 0))
        return rs_error_prefix(err, "%s", c->requests);
    /* A replayed old export verifies as well as today's. */
    if (c->requests_keyring && signed_at < time(NULL) - max_age(s))
        return rs_fail(err, "%s: signed more than %u days ago (a replayed export?)", c->requests, c->max_age_days);
    if (rs_requests_parse((const char *)text.data, text.len, l, err) < 0)
        return rs_error_prefix(err, "%s", c->requests);
    return 0;
}

static int ingest(rs_service *s, rs_error *err)
{
    rs_request_list l = { 0 };
    _cleanup_free_ bool *embargoed = NULL, *held = NULL;
    size_t added = 0;
    bool present;
    int rc;

    if (read_requests(s, &l, &present, err) < 0 || !present)
        return present ? -1 : 0;
    embargoed = calloc(l.n + 1, sizeof(bool));
    held = calloc(l.n + 1, sizeof(bool));
    /* One look at each suite a pass, however many requests name it. */
    for (size_t i = 0; embargoed && held && i < l.n; i++) {
        size_t k = 0;

        while (k < i && (strcmp(l.items[k].suite, l.items[i].suite) || strcmp(l.items[k].codename, l.items[i].codename)))
            k++;
        held[i] = k < i ? held[k] : suite_embargoed(s, &l.items[i]);
        embargoed[i] = l.items[i].embargoed || held[i];
    }
    if (!held)
        embargoed = (free(embargoed), NULL);
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
    rs_repo repo = archive(s);
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
static int fetch_inputs(rs_service *s, const rs_request *r, const stage *g, rs_error *err)
{
    rs_template tpl = { 0 };
    bool used[2] = { false, false };
    int rc;

    if (mkdir(g->probe, 0700) < 0 || mkdir(g->debs, 0700) < 0)
        return rs_fail(err, "%s: %s", g->dir, strerror(errno));
    if (rs_template_load(g->template_deb, g->probe, &tpl, err) < 0)
        return rs_error_prefix(err, "template %s", r->package);
    /* Source binding (pipeline/source_binding.h) starts at the request:
     * what dak says it is for is what the template is. */
    rc = !tpl.source || strcmp(tpl.source, r->source)
             ? rs_fail(err, "template %s: its Source: is %s, but the request is for source %s", r->package,
                       tpl.source ? tpl.source : "unknown", r->source)
             : 0;
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
    return used[0] || used[1] ? 0 : rs_fail(err, "the template lists no files to sign");
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

    if (chmod(path, 0644) < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
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

    /* Published, so readable on purpose: the umask is 077. */
    if (n < 0 || !list || mkdir(g->made, 0755) < 0 || chmod(g->made, 0755) < 0)
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
 * REPROSIGN_REQUEST, REPROSIGN_PACKAGE and REPROSIGN_DIGEST. */
static void note_signatures(rs_service *s, const rs_state_row *row, const json_t *entries)
{
    size_t i;
    json_t *e;

    json_array_foreach(entries, i, e) {
        const char *package = json_string_value(json_object_get(e, "package"));
        const char *digest = json_string_value(json_object_get(e, "signed_digest"));
        rs_log_fields f = { .request = row->req.id, .package = package, .digest = digest };

        rs_notef(s->note, s->note_ctx, &f, "%s: signed %s/%s (%s) with the %s key", row->req.id, package,
                 json_string_value(json_object_get(e, "path")), digest,
                 json_string_value(json_object_get(e, "sig_type")));
    }
}

static void count_signatures(rs_service *s, const json_t *entries, const struct timespec *started)
{
    struct timespec now;
    size_t i;
    json_t *e;

    json_array_foreach(entries, i, e) {
        const char *type = json_string_value(json_object_get(e, "sig_type"));

        rs_metrics_signed(&s->metrics, RS_FACE_ARCHIVE, type && !strcmp(type, "efi") ? SIG_EFI : SIG_LINUX_MODULE, 1);
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    rs_metrics_latency(&s->metrics, RS_FACE_ARCHIVE,
                       (double)(now.tv_sec - started->tv_sec) + (double)(now.tv_nsec - started->tv_nsec) / 1e9);
}

static int sign_request(rs_service *s, const rs_state_row *row, rs_error *err)
{
    _cleanup_(stage_free) stage g;
    _cleanup_free_ char *manifest = NULL, *outputs_text = NULL, *entries_text = NULL;
    json_auto_t *entries = NULL, *outputs = NULL;
    struct timespec started;

    clock_gettime(CLOCK_MONOTONIC, &started);
    if (stage_paths(s, row->req.id, &g, err) < 0)
        return -1;
    /* Whatever an interrupted attempt left is redone from the start. */
    remove_attempts(&g);
    if (stage_attempt(&g, err) < 0)
        return -1;
    if (fetch(s, &row->req, row->req.package, row->req.version, NULL, g.template_deb, err) < 0 ||
        fetch_inputs(s, &row->req, &g, err) < 0 || run_pipeline(s, row, &g, err) < 0)
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
    count_signatures(s, entries, &started);
    note_signatures(s, row, entries);
    note(s, "%s: signed%s", row->req.id, row->req.embargoed ? " and held (embargoed)" : "");
    return 0;
}

/* ---- publishing ---- */

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
    int rc = 0;

    if (rename(pub, dest) == 0)
        return 0;
    if (errno != EXDEV)
        return rs_fail(err, "%s: %s", dest, strerror(errno));
    if (asprintf(&tmp, "%s/.%s.partial-XXXXXX", s->cfg.output, id) < 0 || !mkdtemp(tmp))
        return rs_fail(err, "%s: cannot create a directory: %s", s->cfg.output, strerror(errno));
    /* Each step reports its own failure once; err is never read here. */
    if (chmod(tmp, 0755) < 0)
        rc = rs_fail(err, "%s: %s", tmp, strerror(errno));
    else if (copy_dir(pub, tmp, err) < 0 || sync_path(tmp, err) < 0)
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
    if (check_outputs(dest, row->outputs, err) < 0 ||
        rs_state_set_status(s->state, row->req.id, RS_REQ_PUBLISHED, NULL, err) < 0)
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

/* A transient failure is tried again after 1, 2, 4 ... minutes, at most
 * an hour apart, ten times in a row; then it waits for `service retry`. */
#define RETRY_FIRST_S 60
#define RETRY_MAX_S 3600
#define RETRY_ATTEMPTS 10

static int64_t retry_time(const rs_state_row *row, bool transient)
{
    int64_t delay = RETRY_FIRST_S;

    if (!transient || row->attempts + 1 >= RETRY_ATTEMPTS)
        return 0;
    for (int i = 0; i < row->attempts && delay < RETRY_MAX_S; i++)
        delay *= 2;
    return (int64_t)time(NULL) + (delay < RETRY_MAX_S ? delay : RETRY_MAX_S);
}

static int fail_request(rs_service *s, const rs_state_row *row, const rs_error *why, rs_pass_failures *failed,
                        rs_error *err)
{
    _cleanup_(stage_free) stage g = { 0 };
    int64_t retry_at = retry_time(row, why->transient);

    /* A failed request leaves nothing in staging. */
    if (stage_paths(s, row->req.id, &g, err) == 0)
        rs_remove_tree(g.dir);
    if (why->transient == RS_TRANSIENT_TOKEN)
        rs_metrics_token_error(&s->metrics);
    if (why->transient)
        failed->transient++;
    else
        failed->refused++;
    rs_notef(s->note, s->note_ctx, &(rs_log_fields){ .priority = LOG_WARNING, .request = row->req.id }, "%s: %s: %s%s",
             row->req.id, why->transient ? "failed, for now" : "refused", why->msg,
             retry_at ? " (tried again later)" : why->transient ? " (no more retries: see 'service retry')" : "");
    return rs_state_set_failed(s->state, row->req.id, why->msg, why->transient, retry_at, err);
}

static int sign_pending(rs_service *s, rs_pass_failures *failed, rs_error *err)
{
    rs_state_row *rows = NULL;
    size_t n = 0;
    int rc = 0;

    if (rs_state_list(s->state, RS_REQ_PENDING, &rows, &n, err) < 0)
        return -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rs_error why = { 0 };

        if (sign_request(s, &rows[i], &why) < 0)
            rc = fail_request(s, &rows[i], &why, failed, err);
    }
    rs_state_rows_free(rows, n);
    return rc;
}

const char *rs_service_output_dir(const rs_service *s)
{
    return s->cfg.output;
}

int rs_service_retry(rs_service *s, const char *id, size_t *n, rs_error *err)
{
    if (id && !rs_valid_request_id(id))
        return rs_fail(err, "'%s' is not a request id", id);
    return rs_state_retry(s->state, id, n, err);
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

static int pass(rs_service *s, rs_pass_failures *failed, rs_error *err)
{
    struct stat st;
    size_t due = 0;

    *failed = (rs_pass_failures){ 0 };
    if (stat(s->cfg.output, &st) < 0 || !S_ISDIR(st.st_mode))
        return rs_fail(err, "%s: the output directory does not exist", s->cfg.output);
    clean_output(s);
    if (rs_state_retry_due(s->state, (int64_t)time(NULL), &due, err) < 0)
        return -1;
    if (due)
        note(s, "%zu request(s) that failed for now: trying again", due);
    /* Finish what an earlier run signed before taking on anything new. */
    if (publish_signed(s, err) < 0 || ingest(s, err) < 0 || sign_pending(s, failed, err) < 0 ||
        publish_signed(s, err) < 0)
        return -1;
    return rs_translog_checkpoint(s->log, err);
}

/* Requests by status; false when the state cannot be read. */
static bool count_states(rs_service *s, size_t count[RS_REQ_FAILED + 1])
{
    rs_state_row *rows = NULL;
    size_t n = 0;
    rs_error ignored;

    memset(count, 0, (RS_REQ_FAILED + 1) * sizeof(size_t));
    if (rs_state_list(s->state, -1, &rows, &n, &ignored) < 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((size_t)rows[i].status <= RS_REQ_FAILED)
            count[rows[i].status]++;
    rs_state_rows_free(rows, n);
    return true;
}

/* systemctl status shows this line: what waits and what failed. */
static void notify_status(rs_service *s, const char *prefix)
{
    size_t count[RS_REQ_FAILED + 1];
    char line[256];

    if (!count_states(s, count))
        return;
    snprintf(line, sizeof(line), "%sSTATUS=%zu pending, %zu held, %zu failed, %zu published", prefix ? prefix : "",
             count[RS_REQ_PENDING], count[RS_REQ_HELD], count[RS_REQ_FAILED], count[RS_REQ_PUBLISHED]);
    rs_daemon_notify(line);
}

static void write_metrics(rs_service *s)
{
    rs_metrics_state st = { .log_entries = s->log ? rs_translog_size(s->log) : 0, .last_success = s->last_success };
    rs_error err;

    if (!s->cfg.metrics_file || !count_states(s, st.by_state))
        return;
    if (rs_metrics_write(&s->metrics, &st, s->cfg.metrics_file, &err) < 0)
        rs_notef(s->note, s->note_ctx, &(rs_log_fields){ .priority = LOG_WARNING }, "metrics: %s", err.msg);
}

int rs_service_pass(rs_service *s, rs_pass_failures *failed, rs_error *err)
{
    int rc = pass(s, failed, err);

    if (rc == 0)
        s->last_success = (int64_t)time(NULL);
    write_metrics(s);
    return rc;
}

int rs_service_serve(rs_service *s, volatile sig_atomic_t *stop, rs_error *err)
{
    rs_server_options o = { &s->cfg, s->by_type, 2, s->log, &s->metrics, s->note, s->note_ctx };
    rs_server *server = NULL;

    /* Half the watchdog's period, in 100 ms ticks, at least one. */
    unsigned long long ping = rs_daemon_watchdog_usec() / 200000;
    bool ready = false;

    if (s->cfg.socket && rs_server_start(&o, &server, err) < 0)
        return -1;
    if (server)
        note(s, "listening on %s", s->cfg.socket);
    while (!*stop) {
        rs_error pass_err;
        rs_pass_failures failed;

        if (rs_service_pass(s, &failed, &pass_err) < 0)
            rs_notef(s->note, s->note_ctx, &(rs_log_fields){ .priority = LOG_ERR }, "%s", pass_err.msg);
        /* Ready once the state, the keys and the socket are up and the
         * first pass has run: a unit ordered after this one finds work
         * done that was waiting. */
        notify_status(s, ready ? NULL : "READY=1\n");
        ready = true;
        for (unsigned long long t = 0; !*stop && t < s->cfg.poll_interval * 10ULL; t++) {
            if (ping && t % ping == 0)
                rs_daemon_notify("WATCHDOG=1");
            nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
        }
    }
    rs_daemon_notify("STOPPING=1");
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

/* Times in ISO 8601 UTC (docs/json.md). */
static json_t *row_json(const rs_state_row *r)
{
    char arrived[RS_ISO_TIME_MAX], updated[RS_ISO_TIME_MAX], retry[RS_ISO_TIME_MAX];
    json_t *o;

    rs_iso_time((time_t)r->arrived, arrived);
    rs_iso_time((time_t)r->updated, updated);
    o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:s, s:s, s:s}", "id", r->req.id, "package",
                  r->req.package, "source", r->req.source, "suite", r->req.suite, "codename", r->req.codename,
                  "architecture", r->req.architecture, "version", r->req.version, "embargoed", r->req.embargoed,
                  "status", rs_req_status_name(r->status), "arrived", arrived, "updated", updated);
    if (o && r->reason)
        json_object_set_new(o, "reason", json_string(r->reason));
    if (o && r->failure && r->status == RS_REQ_FAILED) {
        json_object_set_new(o, "failure", json_string(r->failure));
        json_object_set_new(o, "attempts", json_integer(r->attempts));
        if (r->retry_at) {
            rs_iso_time((time_t)r->retry_at, retry);
            json_object_set_new(o, "retry_at", json_string(retry));
        }
    }
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

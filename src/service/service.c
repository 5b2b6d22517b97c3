#include "service/service_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "base/bytes.h"
#include "base/cleanup.h"
#include "base/error.h"
#include "base/file.h"
#include "crypto/ossl.h"
#include "crypto/pkcs11_pin.h"
#include "crypto/signer.h"
#include "pipeline/template.h"
#include "service/config.h"
#include "service/daemon.h"
#include "service/metrics.h"
#include "service/repo.h"
#include "service/service.h"
#include "service/state.h"
#include "translog/log.h"
#include "translog/note.h"

int svc_file_sha256(const char *path, char hex[65], uint64_t *size, rs_error *err)
{
    uint8_t h[32];

    if (rs_file_sha256(path, h, size, err) < 0)
        return rs_error_prefix(err, "%s", path);
    rs_hex(h, sizeof(h), hex);
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
    struct stat st;

    if (lstat(dir, &st) == 0)
        return 0;
    return rs_mkdir_exact(dir, 0755, err);
}

/* Without a configured log_key, the service's own: STATE/log.key, named
 * <hostname>/reprosign; STATE/log.vkey is what verifiers pin. */
static int make_log_key(const char *state_dir, rs_error *err)
{
    char host[256] = "", name[300];
    _cleanup_free_ char *prefix = rs_path_join(state_dir, "log");

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
    _cleanup_free_ char *abs = realpath(config_path, NULL), *db = rs_path_join(state_dir, "state.db"),
                        *staging = rs_path_join(state_dir, "staging");
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
    if (rs_state_create(db, &st, err) < 0 || rs_state_meta_set(st, "config", abs, err) < 0)
        return -1;
    return chmod(db, 0600) == 0 ? 0 : rs_fail(err, "%s: %s", db, strerror(errno));
}

static int take_lock(rs_service *s, bool *busy, rs_error *err)
{
    _cleanup_free_ char *path = rs_path_join(s->dir, "lock");

    if (!path)
        return rs_fail(err, "out of memory");
    if (rs_lock_file(path, &s->lock_fd, busy, err) == 0)
        return 0;
    return *busy ? rs_fail(err, "%s: a service is already running on this state", s->dir) : -1;
}

/* Whether an open takes the state's lock. */
typedef enum { OPEN_SHARED, OPEN_EXCLUSIVE } open_mode;

static int open_service(const char *state_dir, open_mode mode, rs_note_fn note_fn, void *note_ctx, rs_service **out,
                        bool *busy, rs_error *err)
{
    rs_service *s = calloc(1, sizeof(*s));
    _cleanup_free_ char *db = rs_path_join(state_dir, "state.db"), *config = NULL;
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
    if (rc == 0 && mode == OPEN_EXCLUSIVE)
        rc = take_lock(s, busy, err);
    if (rc == 0)
        rc = rs_state_open(db, &s->state, err);
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

int rs_service_open(const char *state_dir, rs_note_fn note, void *note_ctx, rs_service **out, rs_error *err)
{
    bool busy;

    return open_service(state_dir, OPEN_SHARED, note, note_ctx, out, &busy, err);
}

int rs_service_open_exclusive(const char *state_dir, rs_note_fn note, void *note_ctx, rs_service **out, bool *busy,
                              rs_error *err)
{
    return open_service(state_dir, OPEN_EXCLUSIVE, note, note_ctx, out, busy, err);
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
    return s->cfg.log_dir ? strdup(s->cfg.log_dir) : rs_path_join(s->dir, "log");
}

int rs_service_load_keys(rs_service *s, rs_error *err)
{
    const rs_key_spec *seen[RS_SIG_TYPES] = { &s->cfg.keys[SIG_EFI], &s->cfg.keys[SIG_LINUX_MODULE] };
    rs_signer *opened[RS_SIG_TYPES] = { 0 };
    _cleanup_free_ char *dir = log_dir(s), *own_key = rs_path_join(s->dir, "log.key");

    if (!dir || !own_key)
        return rs_fail(err, "out of memory");
    /* Written by name: only the service may replace what is in them (the
     * upload queue may be shared: it is written through a descriptor). */
    if (rs_dir_check_unshared(s->cfg.output, err) < 0)
        return rs_error_prefix(err, "output");
    if (rs_dir_check_unshared(dir, err) < 0)
        return rs_error_prefix(err, "log");
    for (size_t i = 0; i < RS_SIG_TYPES; i++) {
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
    return rs_translog_create(dir, s->cfg.log_key ? s->cfg.log_key : own_key, &s->log, err);
}

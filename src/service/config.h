/* The signing service's configuration: one JSON file (see docs/service.md
 * and reprosign-service.json(5)). Everything is validated when it is read, so the
 * service never starts with a half-understood configuration. */
#ifndef RS_SERVICE_CONFIG_H
#define RS_SERVICE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"
#include "pipeline/files_json.h"
#include "service/signed_pin.h"
#include "service/upload.h"

typedef struct rs_key_spec {
    char *key;       /* file path or pkcs11: URI */
    char *cert;
} rs_key_spec;

/* Sources besides its own whose binaries a template of source `source`
 * may have signed: the one exception to source binding. */
typedef struct rs_foreign_rule {
    char *source;
    char **allowed;
    size_t n_allowed;
} rs_foreign_rule;

typedef struct rs_service_config {
    char *archive;               /* a local Debian repository: dists/, pool/ */
    char *archive_keyring;       /* when set, dists/<suite>/Release.gpg must verify */
    char *requests;              /* requests.json */
    char *requests_signature;    /* its detached signature */
    char *requests_keyring;      /* when set, the signature must verify */
    rs_key_spec keys[RS_SIG_TYPES];         /* by rs_sig_type; key NULL when not configured */
    char *log_key;               /* the log's note signer key file (never a keys.* key);
                                    NULL: STATE/log.key, made by init */
    char *allowlist;             /* trusted_certs fingerprints */
    char *output;                /* the upload directory */
    char *log_dir;               /* the exported transparency log; NULL: STATE/log */
    char *metrics_file;          /* Prometheus text metrics, rewritten every pass; NULL: none */
    char **embargoed_suites;
    size_t n_embargoed_suites;
    char *socket;                /* NULL: no build-time socket */
    unsigned *uids;              /* who may use the socket */
    size_t n_uids;
    unsigned *gids;
    size_t n_gids;
    gid_t socket_group;          /* "socket"."group": who may connect (0660) */
    bool socket_group_set;
    unsigned poll_interval;      /* seconds between looks at requests.json */
    unsigned max_age_days;       /* older signed requests and Release files are refused */
    bool allow_unsigned_archive; /* accept Release and requests.json without keyrings (not for production) */
    rs_foreign_rule *foreign;    /* "allowed_foreign_sources" */
    size_t n_foreign;
    rs_upload_config upload;     /* the signed source-only upload (service/upload.h) */
    rs_signed_pins signed_pins;  /* "signed_sources": what a template's -signed source may be (service/signed_pin.h) */
} rs_service_config;

int rs_service_config_parse(const char *text, size_t len, rs_service_config *out, rs_error *err);
int rs_service_config_load(const char *path, rs_service_config *out, rs_error *err);
void rs_service_config_free(rs_service_config *c);

bool rs_service_config_embargoed(const rs_service_config *c, const char *suite);
/* The foreign sources a template of this source may name (none: n = 0). */
const rs_foreign_rule *rs_service_config_foreign(const rs_service_config *c, const char *source);

#endif

/* Inside the signing service (service.h): its state, shared by the files
 * that do one job each:
 *   service.c          init, open, close, keys and the log;
 *   service_intake.c   requests.json in, embargo by a suite's identity;
 *   service_sign.c     one request signed in staging;
 *   service_publish.c  signed outputs published, and uploaded;
 *   service_signed.c   the -signed source they make: names pinned, version newer;
 *   service_pass.c     passes, serving, status, release, retry, metrics. */
#ifndef RS_SERVICE_INTERNAL_H
#define RS_SERVICE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "pipeline/template.h"
#include "service/metrics.h"
#include "service/repo.h"
#include "service/service.h"
#include "service/state.h"
#include "translog/log.h"

#define MAX_REQUESTS_FILE (64 * 1024 * 1024)

struct rs_service {
    char *dir;
    rs_service_config cfg;
    rs_state *state;
    int lock_fd;
    rs_note_fn note;
    void *note_ctx;
    rs_signer *by_type[RS_SIG_TYPES];       /* may alias each other */
    rs_signer *owned[3];
    size_t n_owned;
    rs_translog *log;
    rs_metrics metrics;
    int64_t last_success;        /* of a whole pass, for the metrics */
};

/* A note with no journal fields. */
#define note(s, ...) rs_notef((s)->note, (s)->note_ctx, NULL, __VA_ARGS__)

/* STATE/staging/<id>/ holds pub/, the signed outputs waiting to be
 * published, and one try-XXXXXX/ per attempt. A fresh directory per
 * attempt, because a killed service's children (dpkg-source) may still be
 * writing into the last one. */
typedef struct stage {
    char *dir, *pub, *work, *template_deb, *probe, *debs, *out, *made;
} stage;

/* The SHA-256 (in hex) and size of a file, read through a fixed buffer;
 * errors name the file. size may be NULL. */
int svc_file_sha256(const char *path, char hex[65], uint64_t *size, rs_error *err);
/* The archive as the configuration names it, with its age limit. */
rs_repo svc_archive(const rs_service *s);
/* Whether r is embargoed, by its names and by who its suite was seen to
 * be (id's members may be NULL). */
bool svc_embargoed(const rs_service *s, const rs_request *r, const rs_suite_identity *id);
/* Reads requests.json and records the new requests. */
int svc_ingest(rs_service *s, rs_error *err);
int svc_stage_paths(rs_service *s, const char *id, stage *g, rs_error *err);
void svc_stage_free(stage *g);
/* pending -> signed (or held), its outputs in staging/<id>/pub. */
int svc_sign_request(rs_service *s, const rs_state_row *row, rs_error *err);
/* signed -> published: its log entries, OUTPUT/<id>/, the upload. A
 * -signed version no longer newer than the last published: the request
 * fails, refused (*refused set, and -1 with the reason). */
int svc_publish(rs_service *s, const rs_state_row *row, bool *refused, rs_error *err);
/* Hidden directories a pass died in the middle of copying. */
void svc_clean_output(rs_service *s);
/* The -signed source a template makes (service_signed.c): its names as the
 * configuration pins them (service/signed_pin.h), and its version newer
 * than the last published for that source and r's codename, unless r
 * published it. */
int svc_check_signed(rs_service *s, const rs_template *t, const rs_request *r, rs_error *err);
int svc_check_newer(rs_service *s, const rs_request *r, const char *source, const char *version, rs_error *err);
/* Records source's version as the last published for r's codename, by r. */
int svc_record_published(rs_service *s, const rs_request *r, const char *source, const char *version, rs_error *err);
/* The Source: and Version: of the one .dsc in dir; both NULL when dir or
 * its .dsc is missing. */
int svc_published_source(const char *dir, char **source, char **version, rs_error *err);

#endif

#include "service/service_internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/bytes.h"
#include "base/cleanup.h"
#include "base/error.h"
#include "base/file.h"
#include "crypto/ossl.h"
#include "service/config.h"
#include "service/gpgv.h"
#include "service/repo.h"
#include "service/requests.h"
#include "service/state.h"

/* ---- requests ---- */

static time_t max_age(const rs_service *s)
{
    return (time_t)s->cfg.max_age_days * 86400;
}

rs_repo svc_archive(const rs_service *s)
{
    return (rs_repo){ s->cfg.archive, s->cfg.archive_keyring, max_age(s) };
}

/* Embargo goes by who a suite is, not by how the request spells it: its
 * suite, its codename, the directory dists/<suite> resolves to, and the
 * Release's own Suite: and Codename:. Decided again on every read of the
 * archive (service_sign.c), from the identity that read saw. */
bool svc_embargoed(const rs_service *s, const rs_request *r, const rs_suite_identity *id)
{
    const rs_service_config *c = &s->cfg;

    return rs_service_config_embargoed(c, r->suite) || rs_service_config_embargoed(c, r->codename) ||
           (id->dir && rs_service_config_embargoed(c, id->dir)) ||
           (id->suite && rs_service_config_embargoed(c, id->suite)) ||
           (id->codename && rs_service_config_embargoed(c, id->codename));
}

/* Who r's suite is now, into *id, and whether it is embargoed. A suite
 * whose identity cannot be read is held: a request is never published by
 * mistake. */
static bool suite_embargoed(rs_service *s, const rs_request *r, rs_suite_identity *id)
{
    rs_repo repo = svc_archive(s);
    rs_error ignored;

    if (rs_repo_suite_identity(&repo, r->suite, id, &ignored) < 0)
        return true;
    return svc_embargoed(s, r, id);
}

static int copy_identity(const rs_suite_identity *from, rs_suite_identity *to)
{
    if ((from->dir && !(to->dir = strdup(from->dir))) || (from->suite && !(to->suite = strdup(from->suite))) ||
        (from->codename && !(to->codename = strdup(from->codename))))
        return -1;
    return 0;
}

static void identities_free(rs_suite_identity *ids, size_t n)
{
    for (size_t i = 0; ids && i < n; i++)
        rs_suite_identity_free(&ids[i]);
    free(ids);
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
    if (c->requests_keyring && rs_read_file(c->requests_signature, MAX_REQUESTS_FILE, &sig, err) < 0)
        return rs_error_prefix(err, "%s", c->requests_signature);
    if (c->requests_keyring && rs_gpgv_verify(c->requests_keyring, &text, &sig, &signed_at, err) < 0)
        return rs_error_prefix(err, "%s", c->requests);
    /* A replayed old export verifies as well as today's. */
    if (c->requests_keyring && signed_at < time(NULL) - max_age(s))
        return rs_fail(err, "%s: signed more than %u days ago (a replayed export?)", c->requests, c->max_age_days);
    if (rs_requests_parse((const char *)text.data, text.len, l, err) < 0)
        return rs_error_prefix(err, "%s", c->requests);
    return 0;
}

int svc_ingest(rs_service *s, rs_error *err)
{
    rs_request_list l = { 0 };
    _cleanup_free_ bool *embargoed = NULL, *held = NULL;
    rs_suite_identity *ids = NULL;
    size_t added = 0;
    bool present, oom;
    int rc;

    if (read_requests(s, &l, &present, err) < 0 || !present)
        return present ? -1 : 0;
    embargoed = calloc(l.n + 1, sizeof(bool));
    held = calloc(l.n + 1, sizeof(bool));
    ids = calloc(l.n + 1, sizeof(*ids));
    oom = !embargoed || !held || !ids;
    /* One look at each suite a pass, however many requests name it; who
     * it was is recorded with each request, for every later read to be
     * compared with (service_sign.c). */
    for (size_t i = 0; !oom && i < l.n; i++) {
        size_t k = 0;

        while (k < i && (strcmp(l.items[k].suite, l.items[i].suite) || strcmp(l.items[k].codename, l.items[i].codename)))
            k++;
        held[i] = k < i ? held[k] : suite_embargoed(s, &l.items[i], &ids[i]);
        oom = k < i && copy_identity(&ids[k], &ids[i]) < 0;
        embargoed[i] = l.items[i].embargoed || held[i];
    }
    rc = oom ? rs_fail(err, "out of memory") : rs_state_add(s->state, &l, embargoed, ids, (int64_t)time(NULL), &added, err);
    if (rc == 0 && added)
        note(s, "%zu new signing request(s)", added);
    identities_free(ids, l.n);
    rs_request_list_free(&l);
    return rc;
}

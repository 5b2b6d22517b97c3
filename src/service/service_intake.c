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
#include "service/release_meta.h"
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
 * Release's own Suite: and Codename:. A suite whose identity cannot be
 * read is held: a request is never published by mistake. */
static bool suite_embargoed(rs_service *s, const rs_request *r)
{
    rs_repo repo = svc_archive(s);
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

/* The -signed source package a request makes, as the upload key will
 * upload it: its names pinned by the configuration (signed_pin.h), and its
 * version newer, in dpkg's order, than the last one this service published
 * for that source and the request's codename. By codename, because one
 * service signs for several suites, each with its own line of versions:
 * linux-signed-amd64 6.1 for bookworm-security after 6.12 for unstable,
 * shim-helpers-amd64-signed 1+16.1+2~deb12u1 after ~deb13u1. The codename
 * is dak's (requests.json), never the template's. The state's meta table
 * keeps that last version under "published:CODENAME:SOURCE" as
 * "VERSION REQUEST-ID": the request id lets a publish interrupted after the
 * record was written finish. */
#include "service/service_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "service/debversion.h"
#include "service/repo.h"
#include "service/signed_pin.h"

/* A .dsc dpkg-source wrote: a few hundred bytes. */
#define MAX_DSC (1024 * 1024)

static int meta_key(const rs_request *r, const char *source, char **key, rs_error *err)
{
    return asprintf(key, "published:%s:%s", r->codename, source) < 0 ? (*key = NULL, rs_fail(err, "out of memory"))
                                                                       : 0;
}

int svc_check_newer(rs_service *s, const rs_request *r, const char *source, const char *version, rs_error *err)
{
    _cleanup_free_ char *key = NULL, *last = NULL;
    char *space;
    int cmp;

    if (meta_key(r, source, &key, err) < 0 || rs_state_meta_get(s->state, key, &last, err) < 0)
        return -1;
    if (!last)
        return 0;
    if ((space = strchr(last, ' ')))
        *space++ = '\0';
    if (space && !strcmp(space, r->id))
        return 0;   /* this request's own publish, interrupted after its record */
    if (rs_debversion_compare(version, last, &cmp, err) < 0)
        return rs_error_prefix(err, "%s", source);
    if (cmp <= 0)
        return rs_fail(err, "the -signed source %s %s: refused, as its version is not newer in dpkg's order than "
                            "%s, the last this service published for %s in %s (request %s)",
                       source, version, last, source, r->codename, space ? space : "unknown");
    return 0;
}

int svc_check_signed(rs_service *s, const rs_template *t, const rs_request *r, rs_error *err)
{
    if (!t->source_dir)
        return 0;
    if (rs_signed_pins_check(&s->cfg.signed_pins, t, err) < 0)
        return -1;
    return svc_check_newer(s, r, t->source_name, t->source_version, err);
}

int svc_record_published(rs_service *s, const rs_request *r, const char *source, const char *version, rs_error *err)
{
    _cleanup_free_ char *key = NULL, *value = NULL;

    if (meta_key(r, source, &key, err) < 0)
        return -1;
    if (asprintf(&value, "%s %s", version, r->id) < 0) {
        value = NULL;
        return rs_fail(err, "out of memory");
    }
    return rs_state_meta_set(s->state, key, value, err);
}

/* The Source: and Version: of the .dsc in dir. */
static int read_dsc(const char *path, char **source, char **version, rs_error *err)
{
    _cleanup_bytes_ rs_bytes buf = { 0 };
    rs_deb822 *paras = NULL;
    size_t n = 0;
    const char *src, *ver;
    int rc = 0;

    if (rs_read_file(path, MAX_DSC, &buf, err) < 0 || rs_deb822_parse((const char *)buf.data, buf.len, &paras, &n, err) < 0)
        return rs_error_prefix(err, "%s", path);
    if (n < 1 || !(src = rs_deb822_get(&paras[0], "Source")) || !(ver = rs_deb822_get(&paras[0], "Version")))
        rc = rs_fail(err, "%s: no Source: and Version:", path);
    else if (!(*source = strdup(src)) || !(*version = strdup(ver)))
        rc = rs_fail(err, "out of memory");
    rs_deb822_free(paras, n);
    return rc;
}

int svc_published_source(const char *dir, char **source, char **version, rs_error *err)
{
    struct dirent **names = NULL;
    int n = scandir(dir, &names, NULL, alphasort), rc = 0;

    *source = *version = NULL;
    if (n < 0)
        return errno == ENOENT ? 0 : rs_fail(err, "%s: %s", dir, strerror(errno));
    for (int i = 0; i < n; i++) {
        _cleanup_free_ char *path = NULL;

        if (rc == 0 && names[i]->d_name[0] != '.' && rs_name_has_suffix(names[i]->d_name, ".dsc")) {
            if (*source)
                rc = rs_fail(err, "%s: more than one .dsc", dir);
            else if (!(path = rs_path_join(dir, names[i]->d_name)))
                rc = rs_fail(err, "out of memory");
            else
                rc = read_dsc(path, source, version, err);
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

#include "service/release_meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/repo.h"

void rs_release_meta_free(rs_release_meta *m)
{
    free(m->suite);
    free(m->codename);
    memset(m, 0, sizeof(*m));
}

int rs_parse_release_date(const char *s, time_t *out)
{
    struct tm tm = { 0 };
    const char *rest = strptime(s, "%a, %d %b %Y %H:%M:%S", &tm);

    /* dak and apt-ftparchive write UTC, as "UTC" or "+0000". */
    if (!rest || (strcmp(rest, " UTC") && strcmp(rest, " +0000") && strcmp(rest, " GMT") && strcmp(rest, " Z")))
        return -1;
    *out = timegm(&tm);
    return *out > 0 ? 0 : -1;
}

static int get_date(const rs_deb822 *p, const char *field, time_t *out, rs_error *err)
{
    const char *v = rs_deb822_get(p, field);

    *out = 0;
    if (v && rs_parse_release_date(v, out) < 0)
        return rs_fail(err, "%s: \"%s\" is not a date", field, v);
    return 0;
}

int rs_release_meta_parse(const char *text, size_t len, rs_release_meta *out, rs_error *err)
{
    rs_deb822 *paras = NULL;
    size_t n = 0;
    const char *suite, *codename;
    int rc;

    memset(out, 0, sizeof(*out));
    if (rs_deb822_parse(text, len, &paras, &n, err) < 0)
        return -1;
    if (n == 0) {
        rs_deb822_free(paras, n);
        return rs_fail(err, "an empty Release file");
    }
    suite = rs_deb822_get(&paras[0], "Suite");
    codename = rs_deb822_get(&paras[0], "Codename");
    rc = get_date(&paras[0], "Date", &out->date, err);
    if (rc == 0)
        rc = get_date(&paras[0], "Valid-Until", &out->valid_until, err);
    if (rc == 0 && ((suite && !(out->suite = strdup(suite))) || (codename && !(out->codename = strdup(codename)))))
        rc = rs_fail(err, "out of memory");
    rs_deb822_free(paras, n);
    if (rc < 0)
        rs_release_meta_free(out);
    return rc;
}

int rs_release_meta_check_fresh(const rs_release_meta *m, time_t now, time_t max_age, rs_error *err)
{
    if (m->valid_until && m->valid_until < now)
        return rs_fail(err, "expired: its Valid-Until has passed (a replayed Release?)");
    if (max_age && m->date && m->date < now - max_age)
        return rs_fail(err, "its Date is more than %lld days old (a replayed Release?)", (long long)(max_age / 86400));
    if (max_age && !m->date)
        return rs_fail(err, "it has no Date, so its age cannot be checked");
    return 0;
}

void rs_suite_identity_free(rs_suite_identity *id)
{
    free(id->dir);
    free(id->suite);
    free(id->codename);
    memset(id, 0, sizeof(*id));
}

static bool same(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

bool rs_suite_identity_equal(const rs_suite_identity *a, const rs_suite_identity *b)
{
    return same(a->dir, b->dir) && same(a->suite, b->suite) && same(a->codename, b->codename);
}

char *rs_suite_identity_describe(const rs_suite_identity *id)
{
    char *s = NULL;

    if (asprintf(&s, "%s (Suite: %s, Codename: %s)", id->dir ? id->dir : "unknown", id->suite ? id->suite : "none",
                 id->codename ? id->codename : "none") < 0)
        return NULL;
    return s;
}

#include "service/signed_pin.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "service/json_list.h"
#include "service/repo.h"

/* debian/control: linux-image-6.12's is 27 KB; 4 MiB is 150 times. */
#define MAX_CONTROL (4 * 1024 * 1024)
#define MAX_LIST 4096
#define SETTING "\"signed_sources\""

static void free_list(char **list)
{
    for (size_t i = 0; list && list[i]; i++)
        free(list[i]);
    free(list);
}

void rs_signed_pins_free(rs_signed_pins *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->rules[i].source);
        free_list(p->rules[i].sources);
        free_list(p->rules[i].binaries);
    }
    free(p->rules);
    memset(p, 0, sizeof(*p));
}

static int check_names(const char *source, const char *what, char **list, rs_error *err)
{
    for (size_t i = 0; list && list[i]; i++)
        if (!rs_valid_package_name(list[i]))
            return rs_fail(err, SETTING ".\"%s\".\"%s\"[%zu]: '%s' is not a package name", source, what, i, list[i]);
    return 0;
}

static int parse_rule(const char *source, const json_t *v, rs_signed_rule *r, rs_error *err)
{
    const char *key;
    json_t *x;

    if (!rs_valid_package_name(source) || !json_is_object(v))
        return rs_fail(err, SETTING ": \"%s\" must map a source name to {\"sources\": [...], \"binaries\": [...]}",
                       source);
    json_object_foreach((json_t *)v, key, x) {
        if (strcmp(key, "sources") && strcmp(key, "binaries"))
            return rs_fail(err, SETTING ".\"%s\": unknown setting \"%s\"", source, key);
    }
    if (!(r->source = strdup(source)))
        return rs_fail(err, "out of memory");
    if (rs_json_string_list(v, "sources", 0, MAX_LIST, "a list of source package names", &r->sources, &r->n_sources,
                            err) < 0 ||
        rs_json_string_list(v, "binaries", 0, MAX_LIST, "a list of binary package names", &r->binaries,
                            &r->n_binaries, err) < 0)
        return rs_error_prefix(err, SETTING ".\"%s\"", source);
    if (check_names(source, "sources", r->sources, err) < 0 || check_names(source, "binaries", r->binaries, err) < 0)
        return -1;
    return 0;
}

int rs_signed_pins_parse(const json_t *doc, rs_signed_pins *p, rs_error *err)
{
    const json_t *map = json_object_get(doc, "signed_sources");
    const char *source;
    json_t *v;

    memset(p, 0, sizeof(*p));
    if (!map)
        return 0;
    if (!json_is_object(map) || json_object_size(map) > MAX_LIST)
        return rs_fail(err, SETTING " must map template source names to {\"sources\": [...], \"binaries\": [...]}");
    if (!(p->rules = calloc(json_object_size(map) + 1, sizeof(*p->rules))))
        return rs_fail(err, "out of memory");
    json_object_foreach((json_t *)map, source, v) {
        if (parse_rule(source, v, &p->rules[p->n++], err) < 0)
            return -1;
    }
    return 0;
}

static bool listed(const rs_signed_pins *p, const char *source, bool binaries, const char *name)
{
    for (size_t i = 0; source && i < p->n; i++) {
        char **list = binaries ? p->rules[i].binaries : p->rules[i].sources;

        for (size_t k = 0; !strcmp(p->rules[i].source, source) && list && list[k]; k++)
            if (!strcmp(list[k], name))
                return true;
    }
    return false;
}

static bool has_prefix(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

/* The kernel's templates: linux-image-X-signed-template of source linux,
 * or of source linux-SUFFIX when X starts with SUFFIX (linux-6.12:
 * linux-image-6.12-amd64-signed-template), so that another linux-* source
 * cannot name the kernel's packages. *mid is "-X" ("-amd64", "-6.12-amd64"). */
static bool kernel_form(const rs_template *t, const char **mid, size_t *len)
{
    const char *pre = "linux-image", *post = "-signed-template", *suffix;
    size_t n = t->package ? strlen(t->package) : 0;

    if (!t->source || (strcmp(t->source, "linux") && !has_prefix(t->source, "linux-")))
        return false;
    if (n < strlen(pre) + strlen(post) + 2 || !has_prefix(t->package, pre) || !rs_name_has_suffix(t->package, post))
        return false;
    suffix = t->source + strlen("linux");
    *mid = t->package + strlen(pre);
    *len = n - strlen(pre) - strlen(post);
    return *len > strlen(suffix) + 1 && has_prefix(*mid, suffix) && (*mid)[strlen(suffix)] == '-';
}

/* The -signed source name Debian's naming gives the template; NULL: none. */
static char *debian_source_name(const rs_template *t)
{
    const char *mid;
    size_t len, n = t->package ? strlen(t->package) : 0;
    char *name = NULL;

    if (kernel_form(t, &mid, &len))
        return asprintf(&name, "linux-signed%.*s", (int)len, mid) < 0 ? NULL : name;
    if (n > strlen("-template") && rs_name_has_suffix(t->package, "-template"))
        return strndup(t->package, n - strlen("-template"));
    return NULL;
}

/* F after its version: the trailing components that start with a letter
 * ("6.1.0-57-cloud-amd64": "cloud-amd64"); NULL when F is all one or the other. */
static const char *flavour_of(const char *f)
{
    const char *start = NULL;

    for (const char *p = strrchr(f, '-'); p; p = p > f ? memrchr(f, '-', (size_t)(p - f)) : NULL) {
        if (!isalpha((unsigned char)p[1]))
            break;
        start = p + 1;
    }
    return start && start > f ? start : NULL;
}

/* Is b the name fmt makes? */
static bool named(const char *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool named(const char *b, const char *fmt, ...)
{
    _cleanup_free_ char *name = NULL;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vasprintf(&name, fmt, ap);
    va_end(ap);
    return n >= 0 && !strcmp(b, name);
}

/* A binary the kernel's -signed source builds from linux-image-F-unsigned:
 * linux-image-F, an installer package *-F-di, and the metapackages
 * linux-image-SUFFIX-FLAVOUR and linux-headers-SUFFIX-FLAVOUR. */
static bool kernel_binary(const rs_template *t, const char *b)
{
    const char *suffix = t->source + strlen("linux"), *pre = "linux-image-", *post = "-unsigned";

    for (size_t i = 0; i < t->files.n_packages; i++) {
        const char *u = t->files.packages[i].name, *flavour;
        size_t n = strlen(u);
        _cleanup_free_ char *f = NULL, *udeb = NULL;

        if (n <= strlen(pre) + strlen(post) || !has_prefix(u, pre) || !rs_name_has_suffix(u, post) ||
            !(f = strndup(u + strlen(pre), n - strlen(pre) - strlen(post))))
            continue;
        if (asprintf(&udeb, "-%s-di", f) < 0) {
            udeb = NULL;   /* asprintf leaves it undefined: the cleanup would free it */
            continue;
        }
        if (named(b, "linux-image-%s", f) || (strlen(b) > strlen(udeb) && rs_name_has_suffix(b, udeb)))
            return true;
        if ((flavour = flavour_of(f)) &&
            (named(b, "linux-image%s-%s", suffix, flavour) || named(b, "linux-headers%s-%s", suffix, flavour)))
            return true;
    }
    return false;
}

static int check_source(const rs_signed_pins *p, const rs_template *t, rs_error *err)
{
    _cleanup_free_ char *debian = debian_source_name(t);

    if ((debian && !strcmp(debian, t->source_name)) || listed(p, t->source, false, t->source_name))
        return 0;
    return rs_fail(err, "its source-template/debian/changelog names the -signed source %s: refused, as Debian's "
                        "naming gives %s%s%s, and " SETTING ".\"%s\".\"sources\" does not list it",
                   t->source_name, debian ? "only " : "none", debian ? debian : "", debian ? "" : " (its name does "
                   "not end in -template)", t->source ? t->source : "(unknown)");
}

static int check_binary(const rs_signed_pins *p, const rs_template *t, const char *b, rs_error *err)
{
    const char *mid;
    size_t len;
    bool kernel = kernel_form(t, &mid, &len);

    if (!strcmp(b, t->source_name) || (kernel && kernel_binary(t, b)) || listed(p, t->source, true, b))
        return 0;
    return rs_fail(err, "its source-template/debian/control builds the binary package %s: refused, as it is not "
                        "the -signed source's own name %s%s, and " SETTING ".\"%s\".\"binaries\" does not list it",
                   b, t->source_name, kernel ? " nor a kernel package of the linux-image-*-unsigned it names" : "",
                   t->source ? t->source : "(unknown)");
}

/* Its Source: is the changelog's, each later paragraph one binary package. */
static int check_control(const rs_signed_pins *p, const rs_template *t, rs_error *err)
{
    _cleanup_free_ char *path = rs_path_join(t->source_dir, "debian/control");
    _cleanup_bytes_ rs_bytes buf = { 0 };
    rs_deb822 *paras = NULL;
    size_t n = 0;
    const char *source;
    int rc = 0;

    if (!path)
        return rs_fail(err, "out of memory");
    if (rs_read_file(path, MAX_CONTROL, &buf, err) < 0 || rs_deb822_parse((const char *)buf.data, buf.len, &paras, &n, err) < 0)
        return rs_error_prefix(err, "source-template/debian/control");
    if (n < 2 || !(source = rs_deb822_get(&paras[0], "Source")) || strcmp(source, t->source_name))
        rc = rs_fail(err, "source-template/debian/control: its first paragraph's Source: is not %s, the changelog's, "
                          "or no binary package follows", t->source_name);
    for (size_t i = 1; rc == 0 && i < n; i++) {
        const char *b = rs_deb822_get(&paras[i], "Package");

        rc = b ? check_binary(p, t, b, err)
               : rs_fail(err, "source-template/debian/control: paragraph %zu names no Package:", i + 1);
    }
    rs_deb822_free(paras, n);
    return rc;
}

int rs_signed_pins_check(const rs_signed_pins *p, const rs_template *t, rs_error *err)
{
    if (!t->source_dir)
        return 0;
    if (!t->package || !t->source_name)
        return rs_fail(err, "the template's package name is unknown: its -signed source cannot be checked");
    if (check_source(p, t, err) < 0 || check_control(p, t, err) < 0)
        return rs_error_prefix(err, "template %s (source %s)", t->package, t->source ? t->source : "unknown");
    return 0;
}

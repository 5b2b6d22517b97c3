#include "service/requests.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/files_json.h"
#include "service/repo.h"

#define MAX_REQUESTS 100000

void rs_request_list_free(rs_request_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        rs_request *r = &l->items[i];

        free(r->id), free(r->package), free(r->source), free(r->suite);
        free(r->codename), free(r->architecture), free(r->version);
    }
    free(l->items);
    memset(l, 0, sizeof(*l));
}

bool rs_valid_version(const char *v)
{
    const char *colon = strchr(v, ':'), *up = colon ? colon + 1 : v;

    if (!*v || strlen(v) > 256)
        return false;
    for (const char *p = v; colon && p < colon; p++)
        if (!isdigit((unsigned char)*p))
            return false;
    if (colon == v || !isdigit((unsigned char)*up))
        return false;
    for (const char *p = up; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr(".+~-:", *p))
            return false;
    return true;
}

static bool valid_arch(const char *a)
{
    if (!*a || strlen(a) > 64)
        return false;
    for (; *a; a++)
        if (!islower((unsigned char)*a) && !isdigit((unsigned char)*a) && *a != '-')
            return false;
    return true;
}

bool rs_valid_request_id(const char *id)
{
    if (!id || !*id || strlen(id) > RS_REQUEST_ID_MAX || id[0] == '.')
        return false;
    for (const char *p = id; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr(".+~-_%", *p))
            return false;
    return true;
}

static int make_id(rs_request *r, rs_error *err)
{
    size_t len = strlen(r->package) + 3 * strlen(r->version) + strlen(r->architecture) + 3;
    char *id = malloc(len), *p;

    if (!id)
        return rs_fail(err, "out of memory");
    p = id + sprintf(id, "%s_", r->package);
    for (const char *v = r->version; *v; v++)
        p += *v == ':' ? sprintf(p, "%%3a") : sprintf(p, "%c", *v);
    sprintf(p, "_%s", r->architecture);
    r->id = id;
    /* Each field is valid, but package names have no length limit and each
     * ':' of the version becomes three characters: the id must still be one
     * `service release` accepts, or a held request could never be released. */
    if (!rs_valid_request_id(id))
        return rs_fail(err, "its id is %zu characters, too long for a request id", strlen(id));
    return 0;
}

static int field(const json_t *obj, const char *name, bool (*valid)(const char *), char **out, rs_error *err)
{
    const char *s = json_string_value(json_object_get(obj, name));

    if (!s)
        return rs_fail(err, "\"%s\" is missing or not a string", name);
    if (!valid(s))
        return rs_fail(err, "\"%s\": '%s' is not valid", name, s);
    if (!(*out = strdup(s)))
        return rs_fail(err, "out of memory");
    return 0;
}

static bool valid_name(const char *s)
{
    return rs_valid_package_name(s);
}

static int parse_one(const json_t *obj, rs_request *r, rs_error *err)
{
    const json_t *emb = json_object_get(obj, "embargoed");

    if (!json_is_object(obj))
        return rs_fail(err, "not an object");
    if (field(obj, "package", valid_name, &r->package, err) < 0 || field(obj, "source", valid_name, &r->source, err) < 0 ||
        field(obj, "suite", rs_valid_suite, &r->suite, err) < 0 ||
        field(obj, "codename", rs_valid_suite, &r->codename, err) < 0 ||
        field(obj, "architecture", valid_arch, &r->architecture, err) < 0 ||
        field(obj, "version", rs_valid_version, &r->version, err) < 0)
        return -1;
    if (emb && !json_is_boolean(emb))
        return rs_fail(err, "\"embargoed\" must be true or false");
    r->embargoed = json_is_true(emb);
    return make_id(r, err);
}

int rs_requests_parse(const char *text, size_t len, rs_request_list *out, rs_error *err)
{
    json_auto_t *doc = NULL;
    const json_t *list;
    json_error_t jerr;
    size_t i;
    json_t *v;

    memset(out, 0, sizeof(*out));
    doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object(doc))
        return rs_fail(err, "invalid JSON at line %d: %s", jerr.line, doc ? "not an object" : jerr.text);
    list = json_object_get(doc, "packages");
    if (!json_is_array(list) || json_array_size(list) > MAX_REQUESTS)
        return rs_fail(err, "\"packages\" must be a list of at most %d requests", MAX_REQUESTS);
    if (!(out->items = calloc(json_array_size(list) + 1, sizeof(rs_request))))
        return rs_fail(err, "out of memory");
    json_array_foreach(list, i, v) {
        out->n = i + 1;
        if (parse_one(v, &out->items[i], err) < 0) {
            rs_request_list_free(out);
            return rs_error_prefix(err, "packages[%zu]", i);
        }
    }
    return 0;
}

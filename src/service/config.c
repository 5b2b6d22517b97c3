#include "service/config.h"

#include <grp.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "service/json_list.h"

#define MAX_CONFIG (1024 * 1024)
#define MAX_LIST 4096

static const char *const known_keys[] = {
    "archive", "archive_keyring", "requests", "requests_signature", "requests_keyring", "keys", "log_key",
    "trusted_certs_allowlist", "output", "log", "embargoed_suites", "socket", "poll_interval",
    "allowed_foreign_sources", "max_age_days", "metrics_file", "allow_unsigned_archive", RS_UPLOAD_CONFIG_NAMES,
    RS_SIGNED_PINS_CONFIG_NAMES, NULL,
};

void rs_service_config_free(rs_service_config *c)
{
    char **strings[] = { &c->archive, &c->archive_keyring, &c->requests, &c->requests_signature,
                         &c->requests_keyring, &c->keys[0].key, &c->keys[0].cert, &c->keys[1].key,
                         &c->keys[1].cert, &c->log_key, &c->allowlist, &c->output,
                         &c->log_dir, &c->socket, &c->metrics_file };

    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
        free(*strings[i]);
    for (size_t i = 0; i < c->n_embargoed_suites; i++)
        free(c->embargoed_suites[i]);
    free(c->embargoed_suites);
    free(c->uids);
    free(c->gids);
    for (size_t i = 0; i < c->n_foreign; i++) {
        free(c->foreign[i].source);
        for (size_t k = 0; k < c->foreign[i].n_allowed; k++)
            free(c->foreign[i].allowed[k]);
        free(c->foreign[i].allowed);
    }
    free(c->foreign);
    rs_upload_config_free(&c->upload);
    rs_signed_pins_free(&c->signed_pins);
    memset(c, 0, sizeof(*c));
}

/* Paths must be absolute: the service runs from anywhere. */
static int get_path(const json_t *obj, const char *name, bool required, bool uri_ok, char **out, rs_error *err)
{
    const json_t *v = json_object_get(obj, name);
    const char *s = json_string_value(v);

    if (!v && !required)
        return 0;
    if (!s || !*s)
        return rs_fail(err, "\"%s\" must be a non-empty string", name);
    if (s[0] != '/' && !(uri_ok && !strncmp(s, "pkcs11:", 7)))
        return rs_fail(err, "\"%s\": %s is not an absolute path%s", name, s, uri_ok ? " or a pkcs11: URI" : "");
    if (!(*out = strdup(s)))
        return rs_fail(err, "out of memory");
    return 0;
}

static int get_key(const json_t *obj, const char *name, rs_key_spec *out, rs_error *err)
{
    const json_t *k = json_object_get(obj, name);

    if (!k)
        return 0;
    if (!json_is_object(k) || json_object_size(k) != 2)
        return rs_fail(err, "\"%s\" must be {\"key\": ..., \"cert\": ...}", name);
    if (get_path(k, "key", true, true, &out->key, err) < 0 || get_path(k, "cert", true, true, &out->cert, err) < 0)
        return rs_error_prefix(err, "\"%s\"", name);
    return 0;
}

static bool same_key(const rs_key_spec *a, const rs_key_spec *b)
{
    return a->key && b->key && (!strcmp(a->key, b->key) || !strcmp(a->cert, b->cert));
}

/* One key, one purpose: a key that signs EFI images must not also sign
 * modules (a module signature is a bare signature over a digest). Named
 * by path; the service also compares the public keys it loads
 * (service.c). The log key is another kind of key (get_log_key). */
static int check_one_purpose(const rs_service_config *c, rs_error *err)
{
    const rs_key_spec *efi = &c->keys[SIG_EFI], *mod = &c->keys[SIG_LINUX_MODULE];

    if (same_key(efi, mod))
        return rs_fail(err, "\"keys\": efi and linux-module name the same key or certificate; give each "
                            "sig_type its own key");
    return 0;
}

/* The log's checkpoints are signed notes by a key of their own: a Secure
 * Boot key signing them would sign bytes a client could also ask for. */
static int get_log_key(const json_t *doc, rs_service_config *c, rs_error *err)
{
    const json_t *v = json_object_get(doc, "log_key");

    if (v && !json_is_string(v))
        return rs_fail(err, "\"log_key\" must name a signed-note signer key file ('reprosign log keygen'), "
                            "not a Secure Boot key and certificate");
    if (get_path(doc, "log_key", false, false, &c->log_key, err) < 0)
        return -1;
    for (size_t i = 0; c->log_key && i < RS_SIG_TYPES; i++) {
        _cleanup_free_ char *a = realpath(c->log_key, NULL), *b = c->keys[i].key ? realpath(c->keys[i].key, NULL) : NULL;

        if (c->keys[i].key && (!strcmp(c->log_key, c->keys[i].key) || (a && b && !strcmp(a, b))))
            return rs_fail(err, "\"log_key\": %s is a Secure Boot signing key; the log needs its own key "
                                "('reprosign log keygen')", c->log_key);
    }
    return 0;
}

static int get_keys(const json_t *doc, rs_service_config *c, rs_error *err)
{
    const json_t *keys = json_object_get(doc, "keys");
    const char *name;
    json_t *v;

    if (!json_is_object(keys) || json_object_size(keys) == 0)
        return rs_fail(err, "\"keys\" must map sig_types (\"efi\", \"linux-module\") to keys");
    json_object_foreach((json_t *)keys, name, v) {
        if (strcmp(name, rs_sig_type_name(SIG_EFI)) && strcmp(name, rs_sig_type_name(SIG_LINUX_MODULE)))
            return rs_fail(err, "\"keys\": unknown sig_type \"%s\"", name);
    }
    if (get_key(keys, rs_sig_type_name(SIG_EFI), &c->keys[SIG_EFI], err) < 0 ||
        get_key(keys, rs_sig_type_name(SIG_LINUX_MODULE), &c->keys[SIG_LINUX_MODULE], err) < 0 ||
        get_log_key(doc, c, err) < 0)
        return -1;
    return check_one_purpose(c, err);
}

static int get_suites(const json_t *doc, rs_service_config *c, rs_error *err)
{
    return rs_json_string_list(doc, "embargoed_suites", 0, MAX_LIST, "a list of suite names", &c->embargoed_suites,
                               &c->n_embargoed_suites, err);
}

static int get_ids(const json_t *sock, const char *name, unsigned **out, size_t *n, rs_error *err)
{
    const json_t *list = json_object_get(sock, name);
    size_t i;
    json_t *v;

    if (!list)
        return 0;
    if (!json_is_array(list) || json_array_size(list) > MAX_LIST)
        return rs_fail(err, "\"socket\".\"%s\" must be a list of numbers", name);
    if (!(*out = calloc(json_array_size(list) + 1, sizeof(unsigned))))
        return rs_fail(err, "out of memory");
    json_array_foreach(list, i, v) {
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= 0xffffffffLL)
            return rs_fail(err, "\"socket\".\"%s\"[%zu] is not a uid/gid", name, i);
        (*out)[i] = (unsigned)json_integer_value(v);
    }
    *n = json_array_size(list);
    return 0;
}

/* A group name, or a number. */
static int get_group(const json_t *v, rs_service_config *c, rs_error *err)
{
    const char *name = json_string_value(v);
    struct group *g;

    if (!v)
        return 0;
    if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) < 0xffffffffLL)
        c->socket_group = (gid_t)json_integer_value(v);
    else if (name && (g = getgrnam(name)))
        c->socket_group = g->gr_gid;
    else
        return rs_fail(err, "\"socket\": \"group\": %s is not a group on this system", name ? name : "(not a name)");
    c->socket_group_set = true;
    return 0;
}

static int get_socket(const json_t *doc, rs_service_config *c, rs_error *err)
{
    const json_t *sock = json_object_get(doc, "socket");

    if (!sock)
        return 0;
    if (!json_is_object(sock))
        return rs_fail(err, "\"socket\" must be an object");
    if (get_path(sock, "path", true, false, &c->socket, err) < 0 ||
        get_ids(sock, "allow_uids", &c->uids, &c->n_uids, err) < 0 ||
        get_ids(sock, "allow_gids", &c->gids, &c->n_gids, err) < 0)
        return rs_error_prefix(err, "\"socket\"");
    if (!c->n_uids && !c->n_gids)
        return rs_fail(err, "\"socket\": allow_uids or allow_gids must name who may use it");
    return get_group(json_object_get(sock, "group"), c, err);
}

static int get_foreign_rule(const char *source, const json_t *list, rs_foreign_rule *r, rs_error *err)
{
    size_t i;
    json_t *v;

    if (!rs_valid_package_name(source) || !json_is_array(list) || json_array_size(list) > MAX_LIST)
        return rs_fail(err, "\"allowed_foreign_sources\": \"%s\" must map a source name to a list of source names",
                       source);
    if (!(r->source = strdup(source)) || !(r->allowed = calloc(json_array_size(list) + 1, sizeof(char *))))
        return rs_fail(err, "out of memory");
    json_array_foreach(list, i, v) {
        if (!json_is_string(v) || !rs_valid_package_name(json_string_value(v)))
            return rs_fail(err, "\"allowed_foreign_sources\".\"%s\"[%zu] is not a source name", source, i);
        if (!(r->allowed[r->n_allowed++] = strdup(json_string_value(v))))
            return rs_fail(err, "out of memory");
    }
    return 0;
}

static int get_foreign(const json_t *doc, rs_service_config *c, rs_error *err)
{
    const json_t *map = json_object_get(doc, "allowed_foreign_sources");
    const char *source;
    json_t *list;

    if (!map)
        return 0;
    if (!json_is_object(map) || json_object_size(map) > MAX_LIST)
        return rs_fail(err, "\"allowed_foreign_sources\" must map source names to lists of source names");
    if (!(c->foreign = calloc(json_object_size(map) + 1, sizeof(*c->foreign))))
        return rs_fail(err, "out of memory");
    json_object_foreach((json_t *)map, source, list) {
        if (get_foreign_rule(source, list, &c->foreign[c->n_foreign++], err) < 0)
            return -1;
    }
    return 0;
}

const rs_foreign_rule *rs_service_config_foreign(const rs_service_config *c, const char *source)
{
    for (size_t i = 0; i < c->n_foreign; i++)
        if (!strcmp(c->foreign[i].source, source))
            return &c->foreign[i];
    return NULL;
}

static int check_names(const json_t *doc, rs_error *err)
{
    const char *name;
    json_t *v;

    json_object_foreach((json_t *)doc, name, v) {
        /* "// ...": a comment, for a configuration file people read. */
        bool known = !strncmp(name, "//", 2);

        for (size_t i = 0; known_keys[i]; i++)
            known |= !strcmp(name, known_keys[i]);
        if (!known)
            return rs_fail(err, "unknown setting \"%s\"", name);
    }
    return 0;
}

static int get_fields(const json_t *doc, rs_service_config *c, rs_error *err)
{
    const json_t *poll = json_object_get(doc, "poll_interval"), *age = json_object_get(doc, "max_age_days");
    const json_t *unsigned_ok = json_object_get(doc, "allow_unsigned_archive");

    if (check_names(doc, err) < 0 || get_path(doc, "archive", true, false, &c->archive, err) < 0 ||
        get_path(doc, "archive_keyring", false, false, &c->archive_keyring, err) < 0 ||
        get_path(doc, "requests", true, false, &c->requests, err) < 0 ||
        get_path(doc, "requests_signature", false, false, &c->requests_signature, err) < 0 ||
        get_path(doc, "requests_keyring", false, false, &c->requests_keyring, err) < 0 ||
        get_path(doc, "trusted_certs_allowlist", false, false, &c->allowlist, err) < 0 ||
        get_path(doc, "output", true, false, &c->output, err) < 0 ||
        get_path(doc, "log", false, false, &c->log_dir, err) < 0 ||
        get_path(doc, "metrics_file", false, false, &c->metrics_file, err) < 0 || get_keys(doc, c, err) < 0 ||
        get_suites(doc, c, err) < 0 || get_socket(doc, c, err) < 0 || get_foreign(doc, c, err) < 0 ||
        rs_upload_config_parse(doc, &c->upload, err) < 0 || rs_signed_pins_parse(doc, &c->signed_pins, err) < 0)
        return -1;
    if (poll && (!json_is_integer(poll) || json_integer_value(poll) < 1 || json_integer_value(poll) > 86400))
        return rs_fail(err, "\"poll_interval\" must be 1 to 86400 seconds");
    c->poll_interval = poll ? (unsigned)json_integer_value(poll) : 60;
    if (age && (!json_is_integer(age) || json_integer_value(age) < 1 || json_integer_value(age) > 3650))
        return rs_fail(err, "\"max_age_days\" must be 1 to 3650 days");
    /* dak re-signs Release daily and exports requests at every run: a
     * month is far past any honest delay, and bounds a replay. */
    c->max_age_days = age ? (unsigned)json_integer_value(age) : 30;
    if (unsigned_ok && !json_is_boolean(unsigned_ok))
        return rs_fail(err, "\"allow_unsigned_archive\" must be true or false");
    c->allow_unsigned_archive = json_is_true(unsigned_ok);
    /* Unsigned inputs are how the key can be made to sign an attacker's
     * binary: refused unless the configuration says so in so many words. */
    if (!c->allow_unsigned_archive && (!c->archive_keyring || !c->requests_keyring))
        return rs_fail(err, "\"%s\" is not set, so %s would be accepted unsigned; set it, or set "
                            "\"allow_unsigned_archive\": true (never in production)",
                       !c->archive_keyring ? "archive_keyring" : "requests_keyring",
                       !c->archive_keyring ? "the archive's Release files" : "requests.json");
    if (c->requests_keyring && !c->requests_signature && asprintf(&c->requests_signature, "%s.sig", c->requests) < 0) {
        c->requests_signature = NULL;
        return rs_fail(err, "out of memory");
    }
    return 0;
}

int rs_service_config_parse(const char *text, size_t len, rs_service_config *out, rs_error *err)
{
    json_auto_t *doc = NULL;
    json_error_t jerr;

    memset(out, 0, sizeof(*out));
    doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object(doc))
        return rs_fail(err, "invalid JSON at line %d: %s", jerr.line, doc ? "not an object" : jerr.text);
    if (get_fields(doc, out, err) < 0) {
        rs_service_config_free(out);
        return -1;
    }
    return 0;
}

int rs_service_config_load(const char *path, rs_service_config *out, rs_error *err)
{
    _cleanup_bytes_ rs_bytes buf = { 0 };

    memset(out, 0, sizeof(*out));
    if (rs_read_file(path, MAX_CONFIG, &buf, err) < 0 ||
        rs_service_config_parse((const char *)buf.data, buf.len, out, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

bool rs_service_config_embargoed(const rs_service_config *c, const char *suite)
{
    for (size_t i = 0; i < c->n_embargoed_suites; i++)
        if (!strcmp(c->embargoed_suites[i], suite))
            return true;
    return false;
}

/* Offline-signing requests as JSON: the file form, which carries the
 * certificate and chain, and the socket's wire form, which names the
 * certificate by its SHA-256. Reading rebuilds the request from its parts
 * and trusts none of what it says it will sign. */
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "crypto/ossl.h"
#include "ops/offline.h"

#define REQUEST_TYPE "reprosign-offline-request"
#define MAX_CERT_DER (64 * 1024)

static json_t *b64_der(X509 *cert)
{
    unsigned char *der = NULL;
    int len = i2d_X509(cert, &der);
    _cleanup_free_ char *text = len > 0 ? rs_base64_encode(der, (size_t)len) : NULL;

    OPENSSL_free(der);
    return text ? json_string(text) : NULL;
}

static json_t *hex_digest(const rs_digest *d)
{
    char hex[2 * RS_MAX_DIGEST + 1];

    rs_hex(d->bytes, d->len, hex);
    return json_string(hex);
}

/* Everything but the certificate, which the caller adds its own way. */
static json_t *request_fields(const rs_offline_request *r)
{
    return json_pack("{s:s, s:i, s:s, s:s?, s:s, s:o, s:o?, s:b, s:s, s:o}", "type", REQUEST_TYPE, "version", 1,
                     "format", r->format->name, "file", r->file, "hash", rs_md_name(r->opts.md), "image_digest",
                     hex_digest(&r->image_digest), "signing_time",
                     r->opts.signing_time ? json_integer((json_int_t)r->opts.time) : NULL, "key_id",
                     r->opts.use_key_id, "tbs_hash", rs_md_name(r->tbs.md), "tbs_digest", hex_digest(&r->tbs));
}

int rs_offline_request_write(const rs_offline_request *r, char **json, rs_error *err)
{
    json_auto_t *doc = request_fields(r);
    json_t *chain = json_array();

    for (int i = 0; chain && i < sk_X509_num(r->chain); i++)
        json_array_append_new(chain, b64_der(sk_X509_value(r->chain, i)));
    *json = NULL;
    if (doc && json_object_set_new(doc, "certificate", b64_der(r->cert)) == 0 &&
        json_object_set_new(doc, "chain", chain) == 0)
        *json = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    return *json ? 0 : rs_fail(err, "cannot encode the request");
}

int rs_offline_request_write_wire(const rs_offline_request *r, const char cert_sha256[65], char **json,
                                  rs_error *err)
{
    json_auto_t *doc = request_fields(r);

    *json = NULL;
    if (doc && json_object_set_new(doc, "certificate_sha256", json_string(cert_sha256)) == 0 &&
        (!r->image_attached || json_object_set_new(doc, "image", json_string("attached")) == 0))
        *json = json_dumps(doc, JSON_COMPACT);
    return *json ? 0 : rs_fail(err, "cannot encode the request");
}

static int parse_digest(const json_t *hash, const json_t *hex, rs_digest *d, const char *what, rs_error *err)
{
    const char *h = json_string_value(hex);

    memset(d, 0, sizeof(*d));
    if (!json_is_string(hash) || rs_md_by_name(json_string_value(hash), &d->md, err) < 0)
        return rs_fail(err, "%s: unsupported or missing hash", what);
    d->len = (unsigned)EVP_MD_get_size(d->md);
    if (!h || strlen(h) != 2 * d->len || rs_unhex(h, d->bytes, d->len) < 0)
        return rs_fail(err, "%s: not a %s digest", what, rs_md_name(d->md));
    return 0;
}

static X509 *parse_cert(const json_t *v, const rs_known_certs *known)
{
    _cleanup_bytes_ rs_bytes der = { 0 };
    const unsigned char *p;
    X509 *cert;

    if (rs_base64_decode(json_string_value(v), MAX_CERT_DER, &der, NULL) < 0)
        return NULL;
    if ((cert = rs_known_certs_by_der(known, &der)))
        return cert;
    p = der.data;
    cert = d2i_X509(NULL, &p, (long)der.len);
    /* The whole text must be the certificate: no trailing bytes. */
    if (cert && p != der.data + der.len) {
        X509_free(cert);
        return NULL;
    }
    return cert;
}

/* The known certificate with this SHA-256, or NULL. */
static int parse_request_cert(const json_t *doc, const rs_known_certs *known, X509 **cert, rs_error *err)
{
    const json_t *der = json_object_get(doc, "certificate"), *sha = json_object_get(doc, "certificate_sha256");
    const char *hex = json_string_value(sha);
    uint8_t want[32];

    if (der && sha)
        return rs_fail(err, "the request has both certificate and certificate_sha256");
    if (!sha)
        return (*cert = parse_cert(der, known)) ? 0 : rs_fail(err, "certificate is not base64 DER X.509");
    if (!known || !known->n)
        return rs_fail(err, "certificate_sha256: only the signing service reads a request without its certificate");
    if (!hex || strlen(hex) != 64 || rs_unhex(hex, want, sizeof(want)) < 0)
        return rs_fail(err, "certificate_sha256 is not a SHA-256 in hex");
    if (!(*cert = rs_known_certs_by_sha256(known, want)))
        return rs_fail(err, "the service holds no key for the request's certificate (certificate_sha256 %s)", hex);
    return 0;
}

/* Informational, but it goes into the service's log: a path's length at
 * most (a NUL inside is refused as JSON already). */
static int parse_file(const json_t *v, char **file, rs_error *err)
{
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v) || json_string_length(v) > PATH_MAX)
        return rs_fail(err, "file is not a path of at most %d bytes", PATH_MAX);
    if (!(*file = strdup(json_string_value(v))))
        return rs_fail(err, "out of memory");
    return 0;
}

/* 9999-12-31T23:59:59Z, the last time an X.509 GeneralizedTime holds. */
#define MAX_SIGNING_TIME 253402300799LL

static int parse_options(const json_t *doc, rs_offline_request *r, rs_error *err)
{
    const json_t *t = json_object_get(doc, "signing_time"), *image = json_object_get(doc, "image");

    r->opts.md = r->image_digest.md;
    r->opts.signing_time = t && !json_is_null(t);
    if (r->opts.signing_time &&
        (!json_is_integer(t) || json_integer_value(t) < 0 || json_integer_value(t) > MAX_SIGNING_TIME))
        return rs_fail(err, "signing_time is not a valid Unix time");
    r->opts.time = r->opts.signing_time ? (time_t)json_integer_value(t) : 0;
    r->opts.use_key_id = json_is_true(json_object_get(doc, "key_id"));
    if (image && (!json_is_string(image) || strcmp(json_string_value(image), "attached")))
        return rs_fail(err, "image: the only value is \"attached\"");
    r->image_attached = image != NULL;
    return 0;
}

static int parse_chain(const json_t *c, const rs_known_certs *known, STACK_OF(X509) *chain, rs_error *err)
{
    size_t i;
    json_t *v;

    if (c && !json_is_array(c))
        return rs_fail(err, "chain is not a list");
    json_array_foreach(c, i, v) {
        X509 *x = parse_cert(v, known);

        if (!x || !sk_X509_push(chain, x)) {
            X509_free(x);
            return rs_fail(err, "chain[%zu] is not base64 DER X.509", i);
        }
    }
    return 0;
}

static int parse_fields(const json_t *doc, const rs_known_certs *known, rs_offline_request *r, STACK_OF(X509) *chain,
                        rs_error *err)
{
    const char *type = json_string_value(json_object_get(doc, "type"));

    if (!type || strcmp(type, REQUEST_TYPE) != 0 || json_integer_value(json_object_get(doc, "version")) != 1)
        return rs_fail(err, "not a reprosign offline-signing request (version 1)");
    r->format = rs_format_named(json_string_value(json_object_get(doc, "format")));
    if (!r->format)
        return rs_fail(err, "unknown format");
    if (parse_digest(json_object_get(doc, "hash"), json_object_get(doc, "image_digest"), &r->image_digest,
                     "image_digest", err) < 0 ||
        parse_digest(json_object_get(doc, "tbs_hash"), json_object_get(doc, "tbs_digest"), &r->tbs, "tbs_digest",
                     err) < 0 ||
        parse_options(doc, r, err) < 0 || parse_request_cert(doc, known, &r->cert, err) < 0 ||
        parse_chain(json_object_get(doc, "chain"), known, chain, err) < 0)
        return -1;
    return parse_file(json_object_get(doc, "file"), &r->file, err);
}

int rs_offline_request_read(const char *text, size_t len, rs_offline_request *out, rs_error *err)
{
    return rs_offline_request_read_known(text, len, NULL, out, err);
}

int rs_offline_request_load(const char *path, rs_offline_request *out, rs_error *err)
{
    _cleanup_bytes_ rs_bytes text = { 0 };

    if (rs_read_file(path, RS_OFFLINE_REQUEST_MAX, &text, err) < 0)
        return -1;
    return rs_offline_request_read((const char *)text.data, text.len, out, err);
}

/* Trust nothing the request says it will sign: rebuild it from its parts
 * and require the same digest. */
static int rebuild(rs_offline_request *parsed, STACK_OF(X509) *chain, rs_offline_request *out, rs_error *err)
{
    if (rs_offline_prepare_digest(parsed->format, &parsed->image_digest, parsed->cert, chain, &parsed->opts, out,
                                  err) < 0)
        return -1;
    if (!rs_digest_equal(&out->tbs, &parsed->tbs)) {
        rs_offline_request_free(out);
        return rs_fail(err, "tbs_digest does not match the signature the request describes");
    }
    out->file = TAKE_PTR(parsed->file);
    out->image_attached = parsed->image_attached;
    return 0;
}

/* A request is a dozen values and a chain of a few certificates, but a
 * frame of nothing but "{}," costs jansson 75 times its size: the values
 * (every '[', '{' and ',' outside a string) are counted before anything
 * is parsed, so parsing costs about the text's own size (#46). */
#define MAX_VALUES 256

static bool few_values(const char *text, size_t len)
{
    bool in_string = false;
    size_t n = 0;

    for (size_t i = 0; i < len; i++) {
        if (in_string && text[i] == '\\')
            i++;
        else if (text[i] == '"')
            in_string = !in_string;
        else if (!in_string && (text[i] == '[' || text[i] == '{' || text[i] == ',') && ++n > MAX_VALUES)
            return false;
    }
    return true;
}

int rs_offline_request_read_known(const char *text, size_t len, const rs_known_certs *known, rs_offline_request *out,
                                  rs_error *err)
{
    json_auto_t *doc = NULL;
    _cleanup_(rs_x509_stackp) STACK_OF(X509) *chain = sk_X509_new_null();
    _cleanup_(rs_offline_request_free) rs_offline_request parsed = { 0 };
    json_error_t jerr;

    memset(out, 0, sizeof(*out));
    if (!chain)
        return rs_fail(err, "out of memory");
    if (!few_values(text, len))
        return rs_fail(err, "not a request: more than %d JSON values", MAX_VALUES);
    doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc || !json_is_object(doc))
        return rs_fail(err, "invalid JSON at line %d: %s", jerr.line, doc ? "not an object" : jerr.text);
    if (parse_fields(doc, known, &parsed, chain, err) < 0)
        return -1;
    return rebuild(&parsed, chain, out, err);
}

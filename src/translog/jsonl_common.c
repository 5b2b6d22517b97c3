#include "translog/jsonl_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "crypto/ossl.h"

int rs_jsonl_read_text(const char *dir, const char *name, bool may_be_missing, rs_bytes *out, rs_error *err)
{
    _cleanup_free_ char *path = rs_path_join(dir, name);

    memset(out, 0, sizeof(*out));
    if (!path)
        return rs_fail(err, "out of memory");
    if (may_be_missing && access(path, F_OK) < 0 && errno == ENOENT)
        return 0;
    if (rs_read_file(path, MAX_LOG_FILE, out, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

/* Splits buf into lines in place. *complete is the length covered by
 * newline-terminated lines; a trailing fragment is not returned. */
int rs_jsonl_split_lines(rs_bytes *buf, char ***lines, size_t *n, size_t *complete, rs_error *err)
{
    size_t start = 0, cap = 0;

    *lines = NULL;
    *n = 0;
    for (size_t i = 0; i < buf->len; i++) {
        /* A NUL would let a line's text differ from its bytes. */
        if (buf->data[i] == '\0')
            return rs_fail(err, "line %zu contains a NUL byte", *n + 1);
        if (buf->data[i] != '\n')
            continue;
        if (*n == cap) {
            char **grown = realloc(*lines, (cap = cap ? 2 * cap : 64) * sizeof(char *));

            if (!grown)
                return rs_fail(err, "out of memory");
            *lines = grown;
        }
        buf->data[i] = '\0';
        (*lines)[(*n)++] = (char *)buf->data + start;
        start = i + 1;
    }
    *complete = start;
    return 0;
}

json_t *rs_jsonl_parse_object(const char *text)
{
    json_t *v = json_loads(text, JSON_REJECT_DUPLICATES, NULL);

    if (v && !json_is_object(v)) {
        json_decref(v);
        return NULL;
    }
    return v;
}

int rs_jsonl_hex_hash(const json_t *v, rs_hash *out)
{
    const char *s = json_string_value(v);

    return s && strlen(s) == 2 * RS_HASH_LEN && rs_unhex(s, out->b, RS_HASH_LEN) == 0 ? 0 : -1;
}

json_t *rs_jsonl_hash_json(const rs_hash *h)
{
    char hex[2 * RS_HASH_LEN + 1];

    rs_hex(h->b, RS_HASH_LEN, hex);
    return json_string(hex);
}

/* What a head's signature covers: its canonical text without "signature". */
int rs_jsonl_head_digest(const json_t *head, uint8_t out[SHA256_DIGEST_LENGTH], rs_error *err)
{
    json_auto_t *body = json_deep_copy(head);
    _cleanup_free_ char *text = NULL;

    if (!body || (json_object_del(body, "signature"), !(text = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS))))
        return rs_fail(err, "out of memory");
    rs_sha256((const uint8_t *)text, strlen(text), out);
    return 0;
}

int rs_jsonl_verify_head_signature(const json_t *head, X509 *cert, rs_error *err)
{
    const char *b64 = json_string_value(json_object_get(head, "signature"));
    _cleanup_bytes_ rs_bytes sig = { 0 };
    uint8_t digest[SHA256_DIGEST_LENGTH];

    if (!b64 || !*b64)
        return rs_fail(err, "no signature");
    if (rs_base64_decode(b64, MAX_SIG, &sig, err) < 0)
        return rs_fail(err, "the signature is not base64");
    if (rs_jsonl_head_digest(head, digest, err) < 0)
        return -1;
    if (rs_verify_digest(X509_get0_pubkey(cert), EVP_sha256(), digest, sizeof(digest), sig.data, sig.len, err) < 0)
        return rs_fail(err, "the signature does not verify with the log certificate");
    return 0;
}


int rs_jsonl_parse_head(const json_t *h, head_fields *f, rs_error *err)
{
    const json_t *size = json_object_get(h, "size"), *prev = json_object_get(h, "prev_size");
    const char *hash = json_string_value(json_object_get(h, "hash"));

    if (!json_is_integer(size) || !json_is_integer(prev) || json_integer_value(size) < 0 ||
        json_integer_value(prev) < 0 || !json_is_integer(json_object_get(h, "time")))
        return rs_fail(err, "size, prev_size or time missing");
    f->size = (uint64_t)json_integer_value(size);
    f->prev = (uint64_t)json_integer_value(prev);
    f->time = json_integer_value(json_object_get(h, "time"));
    f->added = json_object_get(h, "added");
    if (!hash || strcmp(hash, "sha256") != 0)
        return rs_fail(err, "hash is not sha256");
    if (rs_jsonl_hex_hash(json_object_get(h, "root"), &f->root) < 0)
        return rs_fail(err, "root is not a SHA-256 hash");
    if (f->prev >= f->size || !json_is_array(f->added) || json_array_size(f->added) != f->size - f->prev)
        return rs_fail(err, "it must add prev_size..size-1 and list their leaf hashes");
    return 0;
}

X509 *rs_jsonl_read_cert_file(const char *dir, rs_error *err)
{
    _cleanup_free_ char *path = rs_path_join(dir, "log-cert.pem");
    X509 *cert = NULL;

    if (!path) {
        rs_fail(err, "out of memory");
        return NULL;
    }
    if (rs_load_cert(path, &cert, err) < 0)
        rs_error_prefix(err, "%s", path);
    return cert;
}

#include "translog/note.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/cleanup.h"
#include "base/file.h"
#include "crypto/ossl.h"

#define ED25519_KEY_LEN 32
#define ED25519_SIG_LEN 64
#define COSIG_TIME_LEN 8
#define SIG_PREFIX "\xe2\x80\x94 "   /* an em dash and a space */
#define MAX_KEY_FILE 4096

DEFINE_POINTER_CLEANUP(evp_pkeyp, EVP_PKEY, EVP_PKEY_free)

bool rs_note_name_valid(const char *name, size_t len)
{
    if (len == 0 || len > RS_NOTE_MAX_NAME)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];

        /* Go refuses '+', spaces and invalid UTF-8; printable ASCII is a
         * subset every verifier accepts. */
        if (c <= 0x20 || c >= 0x7f || c == '+')
            return false;
    }
    return true;
}

void rs_note_key_free(rs_note_key *k)
{
    free(k->name);
    EVP_PKEY_free(k->pkey);
    memset(k, 0, sizeof(*k));
}

static uint32_t key_hash(const char *name, uint8_t alg, const uint8_t *pub)
{
    size_t n = strlen(name);
    _cleanup_free_ uint8_t *buf = malloc(n + 2 + ED25519_KEY_LEN);
    uint8_t h[32];

    if (!buf)
        return 0;
    memcpy(buf, name, n);
    buf[n] = '\n';
    buf[n + 1] = alg;
    memcpy(buf + n + 2, pub, ED25519_KEY_LEN);
    rs_sha256(buf, n + 2 + ED25519_KEY_LEN, h);
    return (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
}

/* name+hash+base64 → the fields, checked against each other. */
static int parse_key(const char *text, bool private, rs_note_key *out, rs_error *err)
{
    _cleanup_free_ char *copy = strdup(text);
    _cleanup_bytes_ rs_bytes raw = { 0 };
    char *name, *hash_text, *b64, *end;
    uint8_t pub[ED25519_KEY_LEN];
    size_t pub_len = sizeof(pub);
    unsigned long hash;

    memset(out, 0, sizeof(*out));
    if (!copy)
        return rs_fail(err, "out of memory");
    name = copy;
    if (private) {
        if (strncmp(copy, "PRIVATE+KEY+", 12))
            return rs_fail(err, "not a signed-note signer key (PRIVATE+KEY+<name>+<hash>+<key>)");
        name += 12;
    }
    if (!(hash_text = strchr(name, '+')) || !(b64 = strchr(hash_text + 1, '+')))
        return rs_fail(err, "not a signed-note key (<name>+<hash>+<key>)");
    *hash_text++ = '\0';
    *b64++ = '\0';
    hash = strtoul(hash_text, &end, 16);
    if (!rs_note_name_valid(name, strlen(name)) || strlen(hash_text) != 8 || *end ||
        strspn(hash_text, "0123456789abcdef") != 8)
        return rs_fail(err, "a signed-note key with a bad name or hash");
    if (rs_base64_decode(b64, 1 + ED25519_KEY_LEN, &raw, err) < 0 || raw.len != 1 + ED25519_KEY_LEN ||
        (raw.data[0] != RS_NOTE_ALG_ED25519 && raw.data[0] != RS_NOTE_ALG_COSIGNATURE))
        return rs_fail(err, "a signed-note key that is not an Ed25519 key");
    out->pkey = private ? EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, raw.data + 1, ED25519_KEY_LEN)
                        : EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, raw.data + 1, ED25519_KEY_LEN);
    if (!out->pkey || EVP_PKEY_get_raw_public_key(out->pkey, pub, &pub_len) != 1)
        return rs_fail_ssl(err, "a signed-note key that OpenSSL refuses");
    out->alg = raw.data[0];
    out->private = private;
    out->hash = key_hash(name, out->alg, pub);
    if (out->hash != hash || !(out->name = strdup(name))) {
        rs_note_key_free(out);
        return rs_fail(err, "a signed-note key whose hash does not match its name and key");
    }
    return 0;
}

int rs_note_vkey_parse(const char *text, rs_note_key *out, rs_error *err)
{
    return parse_key(text, false, out, err);
}

int rs_note_skey_parse(const char *text, rs_note_key *out, rs_error *err)
{
    return parse_key(text, true, out, err);
}

/* The one line of a key file, without its line end. */
static char *read_key_line(const char *path, rs_error *err)
{
    _cleanup_bytes_ rs_bytes b = { 0 };
    char *text;
    size_t len;

    if (rs_read_file(path, MAX_KEY_FILE, &b, err) < 0) {
        rs_error_prefix(err, "%s", path);
        return NULL;
    }
    len = b.len;
    while (len && (b.data[len - 1] == '\n' || b.data[len - 1] == '\r'))
        len--;
    if (memchr(b.data, '\0', len) || !(text = strndup((const char *)b.data, len))) {
        rs_fail(err, "%s: not a signed-note key", path);
        return NULL;
    }
    return text;
}

int rs_note_vkey_load(const char *path, rs_note_key *out, rs_error *err)
{
    _cleanup_free_ char *text = read_key_line(path, err);

    if (!text)
        return -1;
    return rs_note_vkey_parse(text, out, err) < 0 ? rs_error_prefix(err, "%s", path) : 0;
}

int rs_note_skey_load(const char *path, rs_note_key *out, rs_error *err)
{
    _cleanup_free_ char *text = read_key_line(path, err);

    if (!text)
        return -1;
    return rs_note_skey_parse(text, out, err) < 0 ? rs_error_prefix(err, "%s", path) : 0;
}

int rs_note_keygen(const char *name, uint8_t alg, char **skey, char **vkey, rs_error *err)
{
    uint8_t raw[1 + ED25519_KEY_LEN], pub[1 + ED25519_KEY_LEN];
    size_t pub_len = ED25519_KEY_LEN;
    _cleanup_(evp_pkeyp) EVP_PKEY *k = NULL;
    _cleanup_free_ char *b64_priv = NULL, *b64_pub = NULL;
    uint32_t hash;

    *skey = *vkey = NULL;
    if (!rs_note_name_valid(name, strlen(name)))
        return rs_fail(err, "'%s' is not a key name (printable, no spaces or '+')", name);
    raw[0] = pub[0] = alg;
    if (RAND_priv_bytes(raw + 1, ED25519_KEY_LEN) != 1 ||
        !(k = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, raw + 1, ED25519_KEY_LEN)) ||
        EVP_PKEY_get_raw_public_key(k, pub + 1, &pub_len) != 1)
        return rs_fail_ssl(err, "cannot make an Ed25519 key");
    hash = key_hash(name, alg, pub + 1);
    b64_priv = rs_base64_encode(raw, sizeof(raw));
    b64_pub = rs_base64_encode(pub, sizeof(pub));
    OPENSSL_cleanse(raw, sizeof(raw));
    if (!b64_priv || !b64_pub || asprintf(skey, "PRIVATE+KEY+%s+%08x+%s\n", name, hash, b64_priv) < 0 ||
        asprintf(vkey, "%s+%08x+%s\n", name, hash, b64_pub) < 0)
        return rs_fail(err, "out of memory");
    OPENSSL_cleanse(b64_priv, strlen(b64_priv));
    return 0;
}

static int ed25519_sign(EVP_PKEY *k, const void *msg, size_t len, uint8_t sig[ED25519_SIG_LEN], rs_error *err)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    size_t sig_len = ED25519_SIG_LEN;
    int ok = ctx && EVP_DigestSignInit(ctx, NULL, NULL, NULL, k) == 1 &&
             EVP_DigestSign(ctx, sig, &sig_len, msg, len) == 1 && sig_len == ED25519_SIG_LEN;

    EVP_MD_CTX_free(ctx);
    return ok ? 0 : rs_fail_ssl(err, "Ed25519 signing failed");
}

static bool ed25519_verify(EVP_PKEY *k, const void *msg, size_t len, const uint8_t *sig, size_t sig_len)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    bool ok = ctx && sig_len == ED25519_SIG_LEN && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, k) == 1 &&
              EVP_DigestVerify(ctx, sig, sig_len, msg, len) == 1;

    EVP_MD_CTX_free(ctx);
    return ok;
}

static char *cosigned_message(const char *text, uint64_t t)
{
    char *msg = NULL;

    return asprintf(&msg, "cosignature/v1\ntime %llu\n%s", (unsigned long long)t, text) < 0 ? NULL : msg;
}

static char *sig_line(const rs_note_key *k, const uint8_t *sig, size_t len)
{
    uint8_t buf[4 + COSIG_TIME_LEN + ED25519_SIG_LEN];
    _cleanup_free_ char *b64 = NULL;
    char *line = NULL;

    buf[0] = k->hash >> 24, buf[1] = k->hash >> 16, buf[2] = k->hash >> 8, buf[3] = (uint8_t)k->hash;
    memcpy(buf + 4, sig, len);
    if (!(b64 = rs_base64_encode(buf, 4 + len)))
        return NULL;
    return asprintf(&line, SIG_PREFIX "%s %s\n", k->name, b64) < 0 ? NULL : line;
}

static bool text_valid(const char *text, size_t len)
{
    return len > 0 && text[len - 1] == '\n' && !memchr(text, '\0', len) && len <= RS_NOTE_MAX_SIZE;
}

int rs_note_sign(const rs_note_key *k, const char *text, char **out, rs_error *err)
{
    uint8_t sig[ED25519_SIG_LEN];
    _cleanup_free_ char *line = NULL;
    size_t len = strlen(text);

    *out = NULL;
    if (!k->private || k->alg != RS_NOTE_ALG_ED25519)
        return rs_fail(err, "%s: not a note signer key", k->name);
    if (!text_valid(text, len))
        return rs_fail(err, "a note's text must end with a newline");
    if (ed25519_sign(k->pkey, text, len, sig, err) < 0)
        return -1;
    if (!(line = sig_line(k, sig, sizeof(sig))) || asprintf(out, "%s\n%s", text, line) < 0)
        return rs_fail(err, "out of memory");
    return 0;
}

int rs_note_cosign_line(const rs_note_key *k, const char *text, uint64_t t, char **line, rs_error *err)
{
    uint8_t sig[COSIG_TIME_LEN + ED25519_SIG_LEN];
    _cleanup_free_ char *msg = cosigned_message(text, t);

    *line = NULL;
    if (!k->private || k->alg != RS_NOTE_ALG_COSIGNATURE)
        return rs_fail(err, "%s: not a cosigner key", k->name);
    if (!msg)
        return rs_fail(err, "out of memory");
    for (int i = 0; i < COSIG_TIME_LEN; i++)
        sig[i] = (uint8_t)(t >> (56 - 8 * i));
    if (ed25519_sign(k->pkey, msg, strlen(msg), sig + COSIG_TIME_LEN, err) < 0)
        return -1;
    if (!(*line = sig_line(k, sig, sizeof(sig))))
        return rs_fail(err, "out of memory");
    return 0;
}

void rs_note_free(rs_note *n)
{
    for (size_t i = 0; i < n->n_sigs; i++) {
        free(n->sigs[i].name);
        free(n->sigs[i].sig);
    }
    free(n->sigs);
    free(n->text);
    memset(n, 0, sizeof(*n));
}

/* One "— name base64" line (without its newline) into n->sigs. */
static int parse_sig_line(const char *line, size_t len, rs_note *n, rs_error *err)
{
    size_t plen = strlen(SIG_PREFIX);
    const char *name = line + plen, *space;
    _cleanup_free_ char *b64 = NULL;
    _cleanup_bytes_ rs_bytes raw = { 0 };
    rs_note_sig *s;

    if (len < plen || memcmp(line, SIG_PREFIX, plen))
        return rs_fail(err, "a signature line does not start with an em dash");
    if (!(space = memchr(name, ' ', len - plen)) || !rs_note_name_valid(name, (size_t)(space - name)))
        return rs_fail(err, "a signature line without a valid key name");
    if (!(b64 = strndup(space + 1, (size_t)(line + len - space - 1))))
        return rs_fail(err, "out of memory");
    if (rs_base64_decode(b64, 4 + COSIG_TIME_LEN + 1024, &raw, err) < 0 || raw.len < 5)
        return rs_fail(err, "a signature line whose signature is not base64");
    if (n->n_sigs == RS_NOTE_MAX_SIGS)
        return rs_fail(err, "more than %d signatures on a note", RS_NOTE_MAX_SIGS);
    s = &n->sigs[n->n_sigs];
    if (!(s->name = strndup(name, (size_t)(space - name))) || !(s->sig = malloc(raw.len - 4)))
        return rs_fail(err, "out of memory");
    n->n_sigs++;
    s->hash = (uint32_t)raw.data[0] << 24 | (uint32_t)raw.data[1] << 16 | (uint32_t)raw.data[2] << 8 | raw.data[3];
    s->sig_len = raw.len - 4;
    memcpy(s->sig, raw.data + 4, s->sig_len);
    return 0;
}

static int parse_sigs(const char *sigs, size_t len, rs_note *n, rs_error *err)
{
    if (len == 0 || sigs[len - 1] != '\n')
        return rs_fail(err, "a note without signatures");
    if (!(n->sigs = calloc(RS_NOTE_MAX_SIGS, sizeof(*n->sigs))))
        return rs_fail(err, "out of memory");
    while (len) {
        const char *nl = memchr(sigs, '\n', len);
        size_t line_len = (size_t)(nl - sigs);

        if (parse_sig_line(sigs, line_len, n, err) < 0)
            return -1;
        len -= line_len + 1;
        sigs = nl + 1;
    }
    return 0;
}

int rs_note_parse(const char *msg, size_t len, rs_note *out, rs_error *err)
{
    size_t split = 0;
    bool found = false;

    memset(out, 0, sizeof(*out));
    if (len > RS_NOTE_MAX_SIZE)
        return rs_fail(err, "a note of %zu bytes, over the limit of %d", len, RS_NOTE_MAX_SIZE);
    if (memchr(msg, '\0', len))
        return rs_fail(err, "a note with a NUL byte");
    /* The signatures follow the last blank line, as in Go's note.Open. */
    for (size_t i = 0; i + 1 < len; i++)
        if (msg[i] == '\n' && msg[i + 1] == '\n')
            split = i, found = true;
    if (!found)
        return rs_fail(err, "a note without a blank line before its signatures");
    if (!(out->text = strndup(msg, split + 1)))
        return rs_fail(err, "out of memory");
    out->text_len = split + 1;
    if (parse_sigs(msg + split + 2, len - split - 2, out, err) < 0) {
        rs_note_free(out);
        return -1;
    }
    return 0;
}

int rs_note_check(const rs_note *n, const rs_note_key *k, bool *found, uint64_t *time, rs_error *err)
{
    *found = false;
    for (size_t i = 0; i < n->n_sigs; i++) {
        const rs_note_sig *s = &n->sigs[i];
        bool ok;

        if (s->hash != k->hash || strcmp(s->name, k->name))
            continue;
        if (k->alg == RS_NOTE_ALG_COSIGNATURE) {
            _cleanup_free_ char *msg = NULL;
            uint64_t t = 0;

            if (s->sig_len != COSIG_TIME_LEN + ED25519_SIG_LEN)
                return rs_fail(err, "the cosignature of %s has the wrong length", k->name);
            for (int b = 0; b < COSIG_TIME_LEN; b++)
                t = t << 8 | s->sig[b];
            if (!(msg = cosigned_message(n->text, t)))
                return rs_fail(err, "out of memory");
            ok = ed25519_verify(k->pkey, msg, strlen(msg), s->sig + COSIG_TIME_LEN, ED25519_SIG_LEN);
            if (time)
                *time = t;
        } else {
            ok = ed25519_verify(k->pkey, n->text, n->text_len, s->sig, s->sig_len);
        }
        if (!ok)
            return rs_fail(err, "the signature of %s does not verify", k->name);
        *found = true;
        return 0;
    }
    return 0;
}

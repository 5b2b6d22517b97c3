#include "translog/proof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "crypto/ossl.h"

void rs_tlog_proof_free(rs_tlog_proof *p)
{
    rs_hash_list_free(&p->path);
    free(p->checkpoint);
    rs_bytes_free(&p->extra);
    memset(p, 0, sizeof(*p));
}

/* The next line of [*pos, len) without its newline; NULL at the end or
 * when the rest has no newline. */
static const char *next_line(const char *text, size_t len, size_t *pos, size_t *line_len)
{
    const char *start = text + *pos, *nl = *pos < len ? memchr(start, '\n', len - *pos) : NULL;

    if (!nl)
        return NULL;
    *line_len = (size_t)(nl - start);
    *pos += *line_len + 1;
    return start;
}

static int decode_line(const char *line, size_t n, size_t max, rs_bytes *out, rs_error *err)
{
    _cleanup_free_ char *copy = strndup(line, n);

    if (!copy)
        return rs_fail(err, "out of memory");
    return rs_base64_decode(copy, max, out, err);
}

static int parse_index(const char *line, size_t n, uint64_t *out)
{
    uint64_t v = 0;

    if (n <= 6 || memcmp(line, "index ", 6) || n > 6 + 20 || (n > 7 && line[6] == '0'))
        return -1;
    for (size_t i = 6; i < n; i++) {
        if (line[i] < '0' || line[i] > '9' || v > (UINT64_MAX - (uint64_t)(line[i] - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(line[i] - '0');
    }
    *out = v;
    return 0;
}

static int parse_hashes(const char *text, size_t len, size_t *pos, rs_hash_list *path, rs_error *err)
{
    const char *line;
    size_t n;

    if (!(path->h = calloc(RS_PROOF_MAX_HASHES, sizeof(rs_hash))))
        return rs_fail(err, "out of memory");
    while ((line = next_line(text, len, pos, &n)) && n > 0) {
        _cleanup_bytes_ rs_bytes h = { 0 };

        if (path->n == RS_PROOF_MAX_HASHES)
            return rs_fail(err, "a proof of more than %d hashes", RS_PROOF_MAX_HASHES);
        if (decode_line(line, n, RS_HASH_LEN + 2, &h, err) < 0 || h.len != RS_HASH_LEN)
            return rs_fail(err, "proof line %zu is not a base64 SHA-256 hash", path->n + 1);
        memcpy(path->h[path->n++].b, h.data, RS_HASH_LEN);
    }
    if (!line)
        return rs_fail(err, "a proof without a blank line before its checkpoint");
    return 0;
}

int rs_tlog_proof_parse(const char *text, size_t len, rs_tlog_proof *out, rs_error *err)
{
    size_t pos = strlen(RS_PROOF_HEADER), n;
    const char *line;

    memset(out, 0, sizeof(*out));
    if (len > RS_PROOF_MAX_SIZE)
        return rs_fail(err, "a proof of %zu bytes, over the limit of %d", len, RS_PROOF_MAX_SIZE);
    if (len < pos || memcmp(text, RS_PROOF_HEADER, pos))
        return rs_fail(err, "not a proof: it does not start with c2sp.org/tlog-proof@v1");
    line = next_line(text, len, &pos, &n);
    if (line && n > 6 && !memcmp(line, "extra ", 6)) {
        if (decode_line(line + 6, n - 6, RS_NOTE_MAX_SIZE, &out->extra, err) < 0)
            goto fail;
        line = next_line(text, len, &pos, &n);
    }
    if (!line || parse_index(line, n, &out->index) < 0) {
        rs_fail(err, "a proof without an \"index N\" line");
        goto fail;
    }
    if (parse_hashes(text, len, &pos, &out->path, err) < 0)
        goto fail;
    if (!(out->checkpoint = strndup(text + pos, len - pos)) || memchr(text + pos, '\0', len - pos)) {
        rs_fail(err, "a proof whose checkpoint has a NUL byte");
        goto fail;
    }
    out->checkpoint_len = len - pos;
    return 0;
fail:
    rs_tlog_proof_free(out);
    return -1;
}

char *rs_tlog_proof_format(uint64_t index, const rs_hash_list *path, const char *checkpoint)
{
    size_t cap = strlen(RS_PROOF_HEADER) + 32 + path->n * 46 + strlen(checkpoint) + 2, len;
    char *out = malloc(cap);

    if (!out)
        return NULL;
    len = (size_t)snprintf(out, cap, "%sindex %llu\n", RS_PROOF_HEADER, (unsigned long long)index);
    for (size_t i = 0; i < path->n; i++) {
        _cleanup_free_ char *b64 = rs_base64_encode(path->h[i].b, RS_HASH_LEN);

        if (!b64) {
            free(out);
            return NULL;
        }
        len += (size_t)snprintf(out + len, cap - len, "%s\n", b64);
    }
    snprintf(out + len, cap - len, "\n%s", checkpoint);
    return out;
}

/* Whether an earlier witness than i with a valid cosignature holds the
 * same key: one key is one witness, whatever it is named and however
 * often it is given (#46). */
static bool counted_before(const rs_note_key *witnesses, const bool *valid, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (valid[j] && EVP_PKEY_eq(witnesses[j].pkey, witnesses[i].pkey) == 1)
            return true;
    return false;
}

int rs_check_witnesses(const rs_note *note, const rs_note_key *witnesses, size_t n, size_t min, rs_error *err)
{
    _cleanup_free_ bool *valid = calloc(n ? n : 1, sizeof(*valid));
    size_t good = 0;

    if (!valid)
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (witnesses[i].alg != RS_NOTE_ALG_COSIGNATURE)
            return rs_fail(err, "%s: not a witness (cosignature) key", witnesses[i].name);
        if (rs_note_check(note, &witnesses[i], &valid[i], NULL, err) < 0)
            return -1;
        good += valid[i] && !counted_before(witnesses, valid, i);
    }
    if (good < min)
        return rs_fail(err, "the checkpoint has %zu valid cosignatures of the %zu required "
                            "(by distinct witness keys)", good, min);
    return 0;
}

int rs_tlog_proof_verify(const rs_tlog_proof *p, const rs_note_key *vkey, const rs_note_key *witnesses,
                         size_t n_witnesses, size_t min_witnesses, const void *entry, size_t len,
                         rs_checkpoint *cp, rs_error *err)
{
    _cleanup_(rs_note_free) rs_note note = { 0 };
    rs_hash leaf;

    if (rs_checkpoint_open(p->checkpoint, p->checkpoint_len, vkey, &note, cp, err) < 0)
        return rs_error_prefix(err, "the proof's checkpoint");
    if (rs_check_witnesses(&note, witnesses, n_witnesses, min_witnesses, err) < 0 ||
        rs_merkle_leaf(entry, len, &leaf, err) < 0)
        goto fail;
    if (!rs_merkle_verify_inclusion(p->index, cp->size, &leaf, &p->path, &cp->root)) {
        rs_fail(err, "the entry is not at index %llu of the tree of %llu entries with root of the checkpoint",
                (unsigned long long)p->index, (unsigned long long)cp->size);
        goto fail;
    }
    return 0;
fail:
    rs_checkpoint_free(cp);
    return -1;
}

int rs_log_read_checkpoint(const char *dir, const rs_note_key *vkey, char **msg, rs_note *note, rs_checkpoint *cp,
                           rs_error *err)
{
    _cleanup_free_ char *path = NULL;
    _cleanup_bytes_ rs_bytes b = { 0 };

    *msg = NULL;
    if (!(path = rs_path_join(dir, "checkpoint")))
        return rs_fail(err, "out of memory");
    if (rs_read_file(path, RS_NOTE_MAX_SIZE, &b, err) < 0 ||
        rs_checkpoint_open((const char *)b.data, b.len, vkey, note, cp, err) < 0)
        return rs_error_prefix(err, "%s", path);
    if (!(*msg = strndup((const char *)b.data, b.len))) {
        rs_note_free(note);
        rs_checkpoint_free(cp);
        return rs_fail(err, "out of memory");
    }
    return 0;
}

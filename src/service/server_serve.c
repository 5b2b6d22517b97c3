/* One connection's requests: each is checked and signed by the socket's
 * policy, logged, and only then answered. */
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "base/cleanup.h"
#include "crypto/ossl.h"
#include "ops/offline.h"
#include "service/metrics.h"
#include "service/proto.h"
#include "service/server_internal.h"

int server_answer(int fd, char *text, rs_error *err)
{
    _cleanup_free_ char *owned = text;

    if (!owned)
        return rs_fail(err, "out of memory");
    return rs_frame_write(fd, owned, strlen(owned), err);
}

/* What the key did: the digest it signed (tbs_digest), what that binds
 * to (the image digest, of this format), with which key, for whom. The
 * client's uid, gid and pid are the kernel's word (SO_PEERCRED); the
 * file it names is its own claim, kept with it, escaped. */
static json_t *log_entry(const client *c, const rs_offline_request *r, const char *fpr, const rs_bytes *sig)
{
    char digest[RS_DIGEST_STR], tbs[RS_DIGEST_STR], sig_sha[2 * SHA256_DIGEST_LENGTH + 1];
    char claim[RS_SOCKET_CLAIM_SIZE];
    uint8_t h[SHA256_DIGEST_LENGTH];

    rs_digest_format(&r->image_digest, digest, sizeof(digest));
    rs_digest_format(&r->tbs, tbs, sizeof(tbs));
    rs_sha256(sig->data, sig->len, h);
    rs_hex(h, sizeof(h), sig_sha);
    if (r->file)
        rs_socket_claim(r->file, claim);
    return json_pack("{s:{s:I, s:I, s:I, s:s, s:s?}, s:s, s:s, s:s, s:s, s:s, s:s, s:I}", "client", "uid",
                     (json_int_t)c->cred.uid, "gid", (json_int_t)c->cred.gid, "pid", (json_int_t)c->cred.pid, "exe",
                     c->exe, "claimed_path", r->file ? claim : NULL, "format", r->format->name, "sig_type",
                     r->format->sig_type, "signed_digest", digest, "tbs_digest", tbs, "signer_fingerprint", fpr,
                     "signature_sha256", sig_sha, "time",
                     (json_int_t)(r->opts.signing_time ? r->opts.time : time(NULL)));
}

/* Every signature is a log line too, with the peer: the journal can be
 * searched by REPROSIGN_PEER_UID and REPROSIGN_DIGEST. */
static void note_signed(const client *c, const rs_offline_request *r, uint64_t index)
{
    char digest[RS_DIGEST_STR], uid[16], claim[RS_SOCKET_CLAIM_SIZE];
    rs_log_fields f = { .package = r->file ? claim : NULL, .digest = digest, .peer_uid = uid };

    if (r->file)
        rs_socket_claim(r->file, claim);
    rs_digest_format(&r->image_digest, digest, sizeof(digest));
    snprintf(uid, sizeof(uid), "%u", (unsigned)c->cred.uid);
    rs_notef(c->server->o.note, c->server->o.note_ctx, &f,
             "socket: uid %u pid %d (%s): signed %s %s%s with the %s key, log entry %llu", (unsigned)c->cred.uid,
             (int)c->cred.pid, c->exe[0] ? c->exe : "?", r->format->name, r->file ? "claimed " : "",
             r->file ? claim : digest, r->format->sig_type, (unsigned long long)index);
}

/* Signs one request and returns the answer; the value leaves only once
 * its log entry is on disk. NULL: refused, for the reason in err. */
static char *serve_request(client *c, rs_frame_reader *rd, const char *msg, size_t len, rs_error *err)
{
    rs_server *s = c->server;
    rs_offline_request r = { 0 };
    _cleanup_bytes_ rs_bytes sig = { 0 };
    json_auto_t *entry = NULL;
    uint64_t index = 0;
    char *text = NULL;
    size_t i;
    struct timespec t0;
    int rc;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = rs_socket_sign(&s->keys, rd, msg, len, &r, &i, &sig, err);
    if (rc < 0 && err->transient == RS_TRANSIENT_TOKEN)
        rs_metrics_token_error(s->o.metrics);
    if (rc == 0 && !(entry = log_entry(c, &r, s->keys.fingerprints[i], &sig)))
        rs_fail(err, "out of memory");
    if (entry && rs_translog_append(s->o.log, &entry, 1, &index, err) == 0 &&
        !(text = rs_answer_signed(&sig, index)))
        rs_fail(err, "out of memory");
    if (text) {
        rs_metrics_signed(s->o.metrics, RS_FACE_SOCKET, (int)i, 1);
        rs_metrics_latency(s->o.metrics, RS_FACE_SOCKET, rs_metrics_since(&t0));
        note_signed(c, &r, index);
    }
    rs_offline_request_free(&r);
    return text;
}

void server_serve_client(client *c)
{
    _cleanup_(rs_frame_reader_free) rs_frame_reader rd = {
        .fd = c->fd, .max_frame = RS_PROTO_MAX_REQUEST, .charge = server_charge, .charge_ctx = c
    };
    rs_error err;
    bool eof = false;

    for (;;) {
        const char *msg;
        size_t len;
        char *text;

        if (rs_frame_next(&rd, &msg, &len, &eof, &err) < 0) {
            /* The stream cannot be followed past a bad frame: say why, and close. */
            rs_notef(c->server->o.note, c->server->o.note_ctx, &(rs_log_fields){ .priority = LOG_WARNING },
                     "socket: uid %u pid %d: closed: %s", (unsigned)c->cred.uid, (int)c->cred.pid, err.msg);
            server_answer(c->fd, rs_answer_refused(err.msg), &err);
            break;
        }
        if (eof)
            break;
        err.msg[0] = '\0';
        if (!(text = serve_request(c, &rd, msg, len, &err))) {
            rs_notef(c->server->o.note, c->server->o.note_ctx, &(rs_log_fields){ .priority = LOG_WARNING },
                     "socket: uid %u pid %d: refused: %s", (unsigned)c->cred.uid, (int)c->cred.pid, err.msg);
            text = rs_answer_refused(err.msg);
        }
        if (server_answer(c->fd, text, &err) < 0)
            break;
        rs_frame_release(&rd);
    }
}

/* What the build-time socket lets a client make a key do, and nothing
 * more (docs/security.md):
 * - one key, one purpose: the request's format names the one sig_type,
 *   and so the one key, that may sign it, and the request must name that
 *   key's certificate;
 * - no bare digests: the service rebuilds the bytes to be signed from the
 *   image digest itself (ops/offline.h), and for a format whose key signs
 *   the image digest with nothing around it (a module), it signs only after
 *   reading the image from a sealed memfd sent with the request and finding
 *   that digest.
 * - a request's file name is the client's claim, written to the log and
 *   the journal: at most RS_SOCKET_MAX_PATH bytes, and written escaped
 *   (rs_socket_claim).
 * Kept apart from the server's threads and sockets so the fuzzer
 * (tests/fuzz/fuzz_frames.c) drives exactly this. */
#ifndef RS_SOCKET_POLICY_H
#define RS_SOCKET_POLICY_H

#include "crypto/signer.h"
#include "ops/offline.h"
#include "service/proto.h"

#define RS_SOCKET_MAX_PATH 1024
/* Room for a claim escaped: every byte as \xNN, and the NUL. */
#define RS_SOCKET_CLAIM_SIZE (4 * RS_SOCKET_MAX_PATH + 1)

typedef struct rs_socket_keys {
    rs_signer *const *signers;   /* by rs_sig_type; NULL where none */
    size_t n;
    rs_known_certs known;        /* their certificates, for requests that name one */
    char (*fingerprints)[65];    /* each one's SHA-256, for the log and messages */
} rs_socket_keys;

int rs_socket_keys_init(rs_socket_keys *k, rs_signer *const *signers, size_t n, rs_error *err);
void rs_socket_keys_free(rs_socket_keys *k);

/* Reads one request (msg, len) from the connection rd, checks it against
 * the policy above and signs it: *r is the request as the service rebuilt
 * it, *key the signer's index, *sig the signature value. On refusal
 * nothing was signed and *r is empty. */
int rs_socket_sign(const rs_socket_keys *k, rs_frame_reader *rd, const char *msg, size_t len,
                   rs_offline_request *r, size_t *key, rs_bytes *sig, rs_error *err);

/* The request's file name as the log and the journal show it: printable
 * ASCII other than the space and the backslash as it is, every other byte
 * as \xNN, so
 * a claim can neither start a line of its own, nor hide behind
 * look-alike or right-to-left characters, nor run past
 * RS_SOCKET_CLAIM_SIZE. */
void rs_socket_claim(const char *file, char out[RS_SOCKET_CLAIM_SIZE]);

#endif
